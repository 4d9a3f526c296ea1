// The success rate is cumulative since the process started, counts verify calls even while
// metrics are not exporting, and is one tally per process, whatever copy of the package counts.

import { INSTRUMENTS } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { captureDiag, createMetricHarness, gaugeValue, histogramTotal, type MetricHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { diag, metrics } from '@opentelemetry/api';
import { freshCopy, freshMetrics, type MetricsModule } from './support/fresh-metrics.js';

let gym: MetricsModule;
let harness: MetricHarness;

beforeEach(async () => {
  gym = await freshMetrics();
  harness = createMetricHarness();
  captureDiag();
});

afterEach(async () => {
  await harness.shutdown();
  metrics.disable();
  setTelemetryState(undefined);
  diag.disable();
});

describe('verify tally', () => {
  it('counts calls made while not exporting; only the exported call is in the histogram', async () => {
    // Metrics off (nothing registered, nothing injected): tallied, not recorded.
    gym.recordVerify(10, true);
    gym.recordVerify(10, true);
    gym.recordVerify(10, true);
    expect((await harness.collect()).size).toBe(0);
    // Telemetry comes up: one failed call. The rate covers all four calls.
    metrics.setGlobalMeterProvider(harness.meterProvider);
    gym.recordVerify(30, false);
    const collected = await harness.collect();
    expect(gaugeValue(collected, INSTRUMENTS.verifySuccessRate.name)).toBeCloseTo(0.75, 12);
    expect(histogramTotal(collected, INSTRUMENTS.verifyDuration.name)).toEqual({ count: 1, sum: 30 });
  });

  it('is process-wide: every meter sees the same fraction', async () => {
    const other = createMetricHarness();
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordVerify(1, false);
    new gym.GymMetrics({ meterProvider: other.meterProvider }).recordVerify(1, true);
    expect(gaugeValue(await harness.collect(), INSTRUMENTS.verifySuccessRate.name)).toBe(0);
    expect(gaugeValue(await other.collect(), INSTRUMENTS.verifySuccessRate.name)).toBe(0.5);
    await other.shutdown();
  });

  it('is one tally for two fresh copies of the package loaded in one process', async () => {
    const second = await freshCopy();
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordVerify(1, true);
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordVerify(1, true);
    new second.GymMetrics({ meterProvider: harness.meterProvider }).recordVerify(1, false);
    expect(gaugeValue(await harness.collect(), INSTRUMENTS.verifySuccessRate.name)).toBeCloseTo(2 / 3, 12);
  });

  it('has no test-only reset in the public API', () => {
    expect(Object.keys(gym).filter((name) => /reset|testing/i.test(name))).toEqual([]);
  });
});
