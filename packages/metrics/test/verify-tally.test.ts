// The success rate is cumulative since the process started and counts verify calls even
// while metrics are not exporting; the test-only reset starts it over.

import { METRIC_VERIFY_DURATION, METRIC_VERIFY_SUCCESS_RATE } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { diag, metrics } from '@opentelemetry/api';
import { collectDiag } from './support/collecting-diag-logger.js';
import { freshMetrics, type MetricsModule } from './support/fresh-metrics.js';
import { createHarness, gaugeValue, histogramPoint, type MetricHarness } from './support/metric-harness.js';

let gym: MetricsModule;
let harness: MetricHarness;

beforeEach(async () => {
  gym = await freshMetrics();
  harness = createHarness();
  collectDiag();
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
    expect(gaugeValue(collected, METRIC_VERIFY_SUCCESS_RATE)).toBeCloseTo(0.75, 12);
    expect(histogramPoint(collected, METRIC_VERIFY_DURATION)).toMatchObject({ count: 1, sum: 30 });
  });

  it('is process-wide: every meter sees the same fraction', async () => {
    const other = createHarness();
    gym.recordVerify(1, false, { meterProvider: harness.meterProvider });
    gym.recordVerify(1, true, { meterProvider: other.meterProvider });
    expect(gaugeValue(await harness.collect(), METRIC_VERIFY_SUCCESS_RATE)).toBe(0);
    expect(gaugeValue(await other.collect(), METRIC_VERIFY_SUCCESS_RATE)).toBe(0.5);
    await other.shutdown();
  });

  it('resetVerifyTallyForTesting starts the fraction over', async () => {
    const options = { meterProvider: harness.meterProvider };
    gym.recordVerify(1, false, options);
    gym.recordVerify(1, false, options);
    gym.resetVerifyTallyForTesting();
    gym.recordVerify(1, true, options);
    // Without the reset this would be 1/3.
    expect(gaugeValue(await harness.collect(), METRIC_VERIFY_SUCCESS_RATE)).toBe(1);
  });
});
