// v8js.gc.duration from V8's own gc performance entries: a forced full collection must show up
// as a `major` pause, in seconds, with the advised buckets.
//
// Node hands gc entries to observers later, in a setImmediate of its own: the test never sleeps
// hoping delivery happened. It registers its own PerformanceObserver on 'gc' right after the
// observer's (synchronously, so no entry can be queued in between) and waits until that one has
// seen the pauses it forced. Node queues every entry to every connected observer at once and
// dispatches all of them in the same turn, so by then the observer under test has received
// exactly the same entries: the test compares against them one for one.

import { constants, PerformanceObserver } from 'node:perf_hooks';
import { ATTR_V8JS_GC_TYPE, INSTRUMENTS, V8JS_GC_TYPES } from '@gym/constants';
import { startObserver } from '@gym/observer';
import { createMetricHarness, findMetric, gc, pointsOf, waitFor } from '@gym/test-kit';
import { expect, it } from '@jest/globals';
import type { Histogram, MetricData } from '@opentelemetry/sdk-metrics';

/** Node's gc kind flags, named as the metric names them (written out here, not taken from the package). */
const KIND_NAMES = new Map<number, string>([
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
]);

/** The test's own observer: every gc entry Node delivers from now on, durations in ms by type. */
function watchGc() {
  const byType = new Map<string, number[]>();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      const type = kind === undefined ? undefined : KIND_NAMES.get(kind);
      if (type !== undefined) byType.set(type, [...(byType.get(type) ?? []), entry.duration]);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    byType,
    count: (type: string) => byType.get(type)?.length ?? 0,
    stop: () => observer.disconnect(),
  };
}

/** Waits until the test's observer has seen `n` major pauses, then one more turn for good measure. */
async function majorsDelivered(watch: ReturnType<typeof watchGc>, n: number): Promise<void> {
  await waitFor(`${n} major gc entries to be delivered`, () => watch.count('major') >= n);
  await new Promise((resolve) => setImmediate(resolve));
}

/** Pauses the observer recorded, over every gc type. */
function recorded(collected: Map<string, MetricData>): number {
  return pointsOf<Histogram>(collected, INSTRUMENTS.gcDuration.name).reduce((n, p) => n + p.value.count, 0);
}

it('a forced full collection is a major pause, in s, with the advised buckets and bounded types', async () => {
  const harness = createMetricHarness();
  const observer = startObserver({ meterProvider: harness.meterProvider });
  const watch = watchGc();
  try {
    gc();
    gc();
    await majorsDelivered(watch, 2);
    // Both sides stop together, outside any delivery: each has received the same entries.
    observer.stop();
    watch.stop();
    const collected = await harness.collect();
    const metric = findMetric(collected, INSTRUMENTS.gcDuration.name);
    expect(metric.descriptor.unit).toBe('s');
    for (const point of metric.dataPoints) {
      expect(V8JS_GC_TYPES).toContain(point.attributes[ATTR_V8JS_GC_TYPE]);
      expect(Object.keys(point.attributes)).toEqual([ATTR_V8JS_GC_TYPE]);
      expect((point.value as Histogram).buckets.boundaries).toEqual([...INSTRUMENTS.gcDuration.boundaries]);
      // The semantic conventions' advice (v1.42+), spelled out: the constant must not drift from it.
      expect((point.value as Histogram).buckets.boundaries).toEqual([
        0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
      ]);
    }
    // One record per pause Node reported, of its duration in seconds (Node reports milliseconds).
    const exported = Object.fromEntries(
      pointsOf<Histogram>(collected, INSTRUMENTS.gcDuration.name).map((p) => [
        p.attributes[ATTR_V8JS_GC_TYPE],
        { count: p.value.count, max: p.value.max },
      ]),
    );
    const delivered = Object.fromEntries(
      [...watch.byType].map(([type, ms]) => [type, { count: ms.length, max: Math.max(...ms) / 1000 }]),
    );
    expect(exported).toEqual(delivered);
    expect(exported.major?.count).toBeGreaterThanOrEqual(2);
    const majorSum = pointsOf<Histogram>(collected, INSTRUMENTS.gcDuration.name).find(
      (p) => p.attributes[ATTR_V8JS_GC_TYPE] === 'major',
    )?.value.sum;
    expect(majorSum).toBeCloseTo(
      watch.byType.get('major')!.reduce((s, ms) => s + ms / 1000, 0),
      9,
    );
  } finally {
    observer.stop();
    watch.stop();
    await harness.shutdown();
  }
});

it('after stop the gc observer is disconnected: later pauses are not recorded', async () => {
  const harness = createMetricHarness();
  const observer = startObserver({ meterProvider: harness.meterProvider });
  const watch = watchGc();
  try {
    gc();
    await majorsDelivered(watch, 1);
    expect(recorded(await harness.collect())).toBeGreaterThanOrEqual(1);
    observer.stop();
    const atStop = recorded(await harness.collect());
    const seen = watch.count('major');
    gc();
    gc();
    // Delivered to every connected observer in the same turn: a still-connected one has them now.
    await majorsDelivered(watch, seen + 2);
    expect(recorded(await harness.collect())).toBe(atStop);
  } finally {
    observer.stop();
    watch.stop();
    await harness.shutdown();
  }
});
