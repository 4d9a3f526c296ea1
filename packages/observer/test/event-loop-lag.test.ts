// gym.event_loop.lag_ms by Gym's definition: how late a timer that asked to wake after a fixed
// interval actually woke. The blocked-loop cases run the real clock: a busy loop measured by
// performance.now() blocks at least as long as it says on any machine, and the test waits for
// the sample itself (never a timer it hopes fires later), so only bounds that hold however slow
// the machine is are asserted. The arithmetic cases use an injected clock and fake timers.

import { INSTRUMENTS } from '@gym/constants';
import { startObserver } from '@gym/observer';
import { createMetricHarness, findMetric, histogramPoint, type MetricHarness, waitFor } from '@gym/test-kit';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { Histogram } from '@opentelemetry/api';
import type { Histogram as HistogramValue } from '@opentelemetry/sdk-metrics';
import { startLagSampler } from '../src/event-loop-lag.js';

function blockFor(ms: number): number {
  const start = performance.now();
  while (performance.now() - start < ms) {
    // A synchronous block: exactly what a CPU-bound handler does to a Node server.
  }
  return performance.now() - start;
}

/** Waits for the first lag sample and returns the exported histogram. */
function firstSample(harness: MetricHarness): Promise<HistogramValue> {
  return waitFor('a lag sample', async () => {
    const collected = await harness.collect();
    return collected.has(INSTRUMENTS.eventLoopLag.name)
      ? histogramPoint(collected, INSTRUMENTS.eventLoopLag.name)
      : undefined;
  });
}

describe('a blocked event loop', () => {
  it('a 200 ms synchronous block shows up as one sample of at least 150 ms', async () => {
    const harness = createMetricHarness();
    const observer = startObserver({ meterProvider: harness.meterProvider, lagIntervalMs: 10 });
    try {
      const blocked = blockFor(200);
      const lag = await firstSample(harness);
      expect(lag.max).toBeGreaterThanOrEqual(150);
      // Actual wake − intended wake: the block minus the 10 ms the timer asked to sleep, at most.
      expect(lag.max).toBeGreaterThanOrEqual(blocked - 10);
      expect(lag.count).toBeGreaterThanOrEqual(1);
    } finally {
      observer.stop();
      await harness.shutdown();
    }
  });

  it('with the default 100 ms interval, the same block reports the block minus the interval', async () => {
    const harness = createMetricHarness();
    const started = performance.now();
    const observer = startObserver({ meterProvider: harness.meterProvider });
    try {
      const blocked = blockFor(200);
      const lag = await firstSample(harness);
      const seen = performance.now();
      expect(lag.count).toBeGreaterThanOrEqual(1);
      expect(lag.max).toBeGreaterThanOrEqual(blocked - 100);
      // Not the block itself: the 100 ms the timer asked to sleep are not lag. Every sample was
      // armed after `started` and woke before `seen`, so none can exceed that span minus 100 ms,
      // however slow the machine; a sampler that did not subtract the interval would.
      expect(lag.max).toBeLessThanOrEqual(seen - started - 100);
    } finally {
      observer.stop();
      await harness.shutdown();
    }
  });

  it('is a histogram in ms with the lag boundaries and no attributes', async () => {
    const harness = createMetricHarness();
    const observer = startObserver({ meterProvider: harness.meterProvider, lagIntervalMs: 5 });
    try {
      blockFor(30);
      await firstSample(harness);
      const collected = await harness.collect();
      const metric = findMetric(collected, INSTRUMENTS.eventLoopLag.name);
      expect(metric.descriptor.unit).toBe('ms');
      const point = metric.dataPoints[0]!;
      expect(point.attributes).toEqual({});
      expect(histogramPoint(collected, INSTRUMENTS.eventLoopLag.name).buckets.boundaries).toEqual([
        ...INSTRUMENTS.eventLoopLag.boundaries,
      ]);
    } finally {
      observer.stop();
      await harness.shutdown();
    }
  });
});

describe('startLagSampler (injected clock, fake timers)', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  function recorder(onRecord?: (value: number) => void): { histogram: Histogram; values: number[] } {
    const values: number[] = [];
    const histogram = {
      record(value: number) {
        values.push(value);
        onRecord?.(value);
      },
    } as unknown as Histogram;
    return { histogram, values };
  }

  it('records actual wake − intended wake, one sample per interval, clamped at 0', () => {
    jest.useFakeTimers();
    const { histogram, values } = recorder();
    const times = [0, 130, 130, 225, 225, 320];
    const stop = startLagSampler(histogram, 100, () => times.shift() ?? Number.NaN); // armed at 0 → intended 100
    jest.advanceTimersByTime(100); // woke at 130: lag 30; re-armed at 130 → intended 230
    jest.advanceTimersByTime(100); // woke at 225 ("early" by the clock): lag 0; re-armed at 225
    jest.advanceTimersByTime(100); // woke at 320: lag −5 → 0
    stop();
    expect(values).toEqual([30, 0, 0]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('a throwing histogram never reaches the timer callback, and sampling goes on', () => {
    jest.useFakeTimers();
    let calls = 0;
    const histogram = {
      record() {
        calls += 1;
        throw new Error('record broke');
      },
    } as unknown as Histogram;
    const stop = startLagSampler(histogram, 10, () => 0);
    expect(() => jest.advanceTimersByTime(30)).not.toThrow();
    expect(calls).toBe(3);
    stop();
  });

  it('stop from inside a record leaves no timer armed', () => {
    jest.useFakeTimers();
    let stop = (): void => {};
    const { histogram, values } = recorder(() => stop());
    stop = startLagSampler(histogram, 10, () => 0);
    jest.advanceTimersByTime(10);
    expect(values).toHaveLength(1);
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(100);
    expect(values).toHaveLength(1);
  });

  it('one timer while running; stop twice: nothing armed', () => {
    jest.useFakeTimers();
    const stop = startLagSampler(recorder().histogram, 10, () => 0);
    expect(jest.getTimerCount()).toBe(1);
    stop();
    stop();
    expect(jest.getTimerCount()).toBe(0);
  });
});
