// The metric harness takes a temporality: a delta harness reports only what was recorded since
// the last collection, a cumulative one (the default) the running total. `collectMetrics` reads
// any reader the way the harness does.

import { collectMetrics, counterValue, createMetricHarness, PullMetricReader } from '@gym/test-kit';
import { describe, expect, it } from '@jest/globals';
import { AggregationTemporality, MeterProvider } from '@opentelemetry/sdk-metrics';

/** What the harness reports for a counter after adding 2, then after adding 3 more. */
async function twoCollections(temporality?: AggregationTemporality): Promise<[number, number]> {
  const harness = createMetricHarness(temporality === undefined ? {} : { temporality });
  try {
    const counter = harness.meterProvider.getMeter('test').createUpDownCounter('test.count');
    counter.add(2);
    const first = counterValue(await harness.collect(), 'test.count');
    counter.add(3);
    return [first, counterValue(await harness.collect(), 'test.count')];
  } finally {
    await harness.shutdown();
  }
}

describe('createMetricHarness temporality', () => {
  it('is cumulative by default', async () => {
    expect(await twoCollections()).toEqual([2, 5]);
  });

  it('reports only the change since the last collection when delta', async () => {
    expect(await twoCollections(AggregationTemporality.DELTA)).toEqual([2, 3]);
  });
});

describe('collectMetrics', () => {
  it('reads a reader by instrument name, leaving out instruments without points', async () => {
    const reader = new PullMetricReader();
    const provider = new MeterProvider({ readers: [reader] });
    try {
      const meter = provider.getMeter('test');
      meter.createHistogram('test.unused');
      meter.createCounter('test.used').add(4);
      const collected = await collectMetrics(reader);
      expect([...collected.keys()]).toEqual(['test.used']);
      expect(counterValue(collected, 'test.used')).toBe(4);
    } finally {
      await provider.shutdown();
    }
  });
});
