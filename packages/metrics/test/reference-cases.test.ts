// NeMo Gym's own test_metrics.py cases 1–9, against a real
// SDK MeterProvider and reader. Cases 10–11 (the deliberately unused instrument and the
// subset of lens names) live in subset.test.ts.

import { INSTRUMENTS } from '@gym/constants';
import { isMetricsExporting, setTelemetryState } from '@gym/core';
import {
  captureDiag,
  createMetricHarness,
  type DiagCapture,
  gaugeValue,
  histogramTotal,
  type MetricHarness,
} from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { diag, type MeterProvider, metrics } from '@opentelemetry/api';
import { freshMetrics, type MetricsModule } from './support/fresh-metrics.js';

let gym: MetricsModule;
let harness: MetricHarness;
let logger: DiagCapture;

beforeEach(async () => {
  gym = await freshMetrics();
  harness = createMetricHarness();
  logger = captureDiag();
});

afterEach(async () => {
  await harness.shutdown();
  metrics.disable();
  setTelemetryState(undefined);
  diag.disable();
});

describe('Gym reference cases (test_metrics.py)', () => {
  it('1 recording_without_telemetry_is_a_no_op: no provider, no state, no meter: silent', async () => {
    expect(isMetricsExporting()).toBe(false);
    gym.declareOrchestrator();
    expect(gym.recordRolloutDuration(125)).toBeUndefined();
    expect(gym.recordVerify(40, true)).toBeUndefined();
    expect(gym.recordActiveServers(3)).toBeUndefined();
    // Not a warning, not an error, from anyone.
    expect(logger.messages.filter((m) => m.level === 'warn' || m.level === 'error')).toEqual([]);
    // The harness's provider exists but nobody registered it: it must have seen nothing.
    expect((await harness.collect()).size).toBe(0);
  });

  it('2 recording_is_a_no_op_on_a_non_exporting_process: a registered provider is never touched', async () => {
    // A real provider is registered globally, but the published state says metrics are off.
    metrics.setGlobalMeterProvider(harness.meterProvider);
    setTelemetryState({ metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator: true });
    gym.recordRolloutDuration(125);
    gym.recordVerify(40, true);
    gym.recordActiveServers(3);
    expect((await harness.collect()).size).toBe(0);

    // The same with a provider that must not be touched at all: any property read throws.
    metrics.disable();
    let touched = 0;
    const tripwire = new Proxy({} as MeterProvider, {
      get() {
        touched += 1;
        throw new Error('the meter provider was touched');
      },
    });
    metrics.setGlobalMeterProvider(tripwire);
    touched = 0; // registration itself may read the object; only the recorders count
    gym.recordRolloutDuration(125);
    gym.recordVerify(40, true);
    gym.recordActiveServers(3);
    expect(touched).toBe(0);
    expect(logger.from('@gym/metrics:')).toEqual([]);
  });

  it('3 recording_errors_never_reach_the_caller: a provider whose getMeter throws', () => {
    const options = {
      meterProvider: {
        getMeter(): never {
          throw new Error('meter property raises');
        },
      },
    };
    expect(() => new gym.GymMetrics(options).recordRolloutDuration(125)).not.toThrow();
    expect(() => new gym.GymMetrics(options).recordVerify(40, true)).not.toThrow();
    gym.declareOrchestrator();
    expect(() => new gym.GymMetrics(options).recordActiveServers(3)).not.toThrow();
    // Reported once through diag, naming the error.
    const reported = logger.from('@gym/metrics:');
    expect(reported).toHaveLength(1);
    expect(reported[0]?.level).toBe('warn');
    expect(reported[0]?.message).toContain('meter property raises');
  });

  it('4 rollout_duration_reaches_the_named_instrument: 125 ms → count 1, sum 125', async () => {
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordRolloutDuration(125);
    const point = histogramTotal(await harness.collect(), INSTRUMENTS.rolloutDuration.name);
    expect(point.count).toBe(1);
    expect(point.sum).toBe(125);
  });

  it('5 verify_records_duration_and_success_rate: 40 ms ok → sum 40, rate 1.0', async () => {
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordVerify(40, true);
    const collected = await harness.collect();
    expect(histogramTotal(collected, INSTRUMENTS.verifyDuration.name).sum).toBe(40);
    expect(gaugeValue(collected, INSTRUMENTS.verifySuccessRate.name)).toBe(1);
  });

  it('6 verify_success_rate_is_the_cumulative_fraction: 3 ok + 1 failed → 0.75, count 4', async () => {
    const options = { meterProvider: harness.meterProvider };
    new gym.GymMetrics(options).recordVerify(10, true);
    new gym.GymMetrics(options).recordVerify(20, true);
    new gym.GymMetrics(options).recordVerify(30, false);
    new gym.GymMetrics(options).recordVerify(40, true);
    const collected = await harness.collect();
    expect(gaugeValue(collected, INSTRUMENTS.verifySuccessRate.name)).toBeCloseTo(0.75, 12);
    // Every point of the histogram together (however its attributes split the calls).
    const points = collected.get(INSTRUMENTS.verifyDuration.name)?.dataPoints ?? [];
    expect(points.reduce((calls, point) => calls + (point.value as { count: number }).count, 0)).toBe(4);
  });

  it('7 verify_success_rate_starts_at_zero_after_a_failure: first call failed → 0.0', async () => {
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordVerify(40, false);
    expect(gaugeValue(await harness.collect(), INSTRUMENTS.verifySuccessRate.name)).toBe(0);
  });

  it('8 active_servers_gauge_is_set: 3 → 3', async () => {
    gym.declareOrchestrator();
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordActiveServers(3);
    expect(gaugeValue(await harness.collect(), INSTRUMENTS.serversActive.name)).toBe(3);
  });

  it('9 active_servers_reflects_the_latest_value: 3 then 5 → 5', async () => {
    gym.declareOrchestrator();
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordActiveServers(3);
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordActiveServers(5);
    expect(gaugeValue(await harness.collect(), INSTRUMENTS.serversActive.name)).toBe(5);
  });
});
