// The delta reader reports only what happened since the last collection: an observable
// instrument whose callback was removed disappears, where a cumulative reader keeps it.

import { DeltaPullMetricReader, PullMetricReader } from '@gym/test-kit';
import { describe, expect, it } from '@jest/globals';
import type { ObservableCallback } from '@opentelemetry/api';
import { MeterProvider, type MetricReader } from '@opentelemetry/sdk-metrics';

async function names(reader: MetricReader): Promise<string[]> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((scope) =>
    scope.metrics.filter((metric) => metric.dataPoints.length > 0).map((metric) => metric.descriptor.name),
  );
}

/** What `reader` collects before and after the gauge's callback is removed. */
async function beforeAndAfterRemoval(reader: MetricReader): Promise<[string[], string[]]> {
  // One reader per provider: a second reader's collection would run the callback for both.
  const provider = new MeterProvider({ readers: [reader] });
  const gauge = provider.getMeter('test').createObservableGauge('test.gauge');
  const callback: ObservableCallback = (result) => result.observe(1);
  gauge.addCallback(callback);
  try {
    const before = await names(reader);
    gauge.removeCallback(callback);
    return [before, await names(reader)];
  } finally {
    await provider.shutdown();
  }
}

describe('DeltaPullMetricReader', () => {
  it('drops an observable instrument once its callback is gone', async () => {
    expect(await beforeAndAfterRemoval(new DeltaPullMetricReader())).toEqual([['test.gauge'], []]);
  });

  it('control: a cumulative reader keeps reporting it', async () => {
    expect(await beforeAndAfterRemoval(new PullMetricReader())).toEqual([['test.gauge'], ['test.gauge']]);
  });
});
