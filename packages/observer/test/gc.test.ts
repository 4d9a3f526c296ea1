// v8js.gc.duration from V8's own gc performance entries: a forced full collection must show up
// as a `major` pause, in seconds, with the advised buckets.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  ATTR_V8JS_GC_TYPE,
  METRIC_V8JS_GC_DURATION,
  V8JS_GC_DURATION_BOUNDARIES_S,
  V8JS_GC_TYPES,
} from '@gym/constants';
import { startObserver } from '@gym/observer';
import { createMetricHarness, findMetric } from '@gym/test-kit';
import { expect, it } from '@jest/globals';
import type { Histogram, MetricData } from '@opentelemetry/sdk-metrics';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
setFlagsFromString('--no-expose-gc');

/** PerformanceObserver callbacks are delivered asynchronously: wait for them. */
const delivered = () => new Promise((resolve) => setTimeout(resolve, 20));

function majorCount(collected: Map<string, MetricData>): number {
  const metric = collected.get(METRIC_V8JS_GC_DURATION);
  const point = metric?.dataPoints.find((p) => p.attributes[ATTR_V8JS_GC_TYPE] === 'major');
  return (point?.value as Histogram | undefined)?.count ?? 0;
}

it('a forced full collection is a major pause, in s, with the advised buckets and bounded types', async () => {
  const harness = createMetricHarness();
  const observer = startObserver({ meterProvider: harness.meterProvider });
  try {
    gc();
    gc();
    await delivered();
    const collected = await harness.collect();
    const metric = findMetric(collected, METRIC_V8JS_GC_DURATION);
    expect(metric.descriptor.unit).toBe('s');
    expect(majorCount(collected)).toBeGreaterThanOrEqual(2);
    for (const point of metric.dataPoints) {
      expect(V8JS_GC_TYPES).toContain(point.attributes[ATTR_V8JS_GC_TYPE]);
      expect(Object.keys(point.attributes)).toEqual([ATTR_V8JS_GC_TYPE]);
      const value = point.value as Histogram;
      expect(value.buckets.boundaries).toEqual([...V8JS_GC_DURATION_BOUNDARIES_S]);
      // Seconds, not milliseconds: a pause of a second or more would be an outage here.
      expect(value.max!).toBeLessThan(1);
    }
  } finally {
    observer.stop();
    await harness.shutdown();
  }
});

it('after stop the gc observer is disconnected: later pauses are not recorded', async () => {
  const harness = createMetricHarness();
  const observer = startObserver({ meterProvider: harness.meterProvider });
  try {
    gc();
    await delivered();
    const before = majorCount(await harness.collect());
    expect(before).toBeGreaterThanOrEqual(1);
    observer.stop();
    gc();
    gc();
    await delivered();
    expect(majorCount(await harness.collect())).toBe(before);
  } finally {
    observer.stop();
    await harness.shutdown();
  }
});
