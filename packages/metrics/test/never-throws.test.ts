// Telemetry never breaks the program it observes: whatever part of the meter throws (or the
// diag logger itself), the recorders return normally, the failure is reported once through
// diag, and a healthy meter used afterwards still records. `null` in the options means "not
// injected", exactly like `undefined`.

import { METRIC_ROLLOUT_DURATION, METRIC_SERVERS_ACTIVE, METRIC_VERIFY_SUCCESS_RATE } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import {
  captureDiag,
  createMetricHarness,
  type DiagCapture,
  gaugeValue,
  histogramPoint,
  installThrowingDiagLogger,
  type MetricHarness,
} from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { diag, type Meter, type MeterProvider, metrics } from '@opentelemetry/api';
import { freshMetrics, type MetricsModule } from './support/fresh-metrics.js';

let gym: MetricsModule;
let harness: MetricHarness;
let logger: DiagCapture;

beforeEach(async () => {
  gym = await freshMetrics();
  harness = createMetricHarness();
  logger = captureDiag();
  gym.declareOrchestrator();
});

afterEach(async () => {
  await harness.shutdown();
  metrics.disable();
  setTelemetryState(undefined);
  diag.disable();
});

const boom = (what: string) => () => {
  throw new Error(`${what} failed`);
};

/** A real SDK meter with one part replaced by a throwing one. */
function brokenMeter(part: 'createHistogram' | 'createGauge' | 'record'): Meter {
  const real = harness.meterProvider.getMeter('broken');
  if (part === 'record') {
    const broken = { record: boom('record') };
    return { ...real, createHistogram: () => broken, createGauge: () => broken } as unknown as Meter;
  }
  return new Proxy(real, {
    get: (target, key) => (key === part ? boom(part) : Reflect.get(target, key)),
  });
}

const throwingGetters = {
  get meter(): Meter {
    throw new Error('meter getter failed');
  },
};

const cases: ReadonlyArray<readonly [string, () => Parameters<MetricsModule['recordVerify']>[2]]> = [
  ['a meter getter that throws', () => throwingGetters],
  ['a provider whose getMeter throws', () => ({ meterProvider: { getMeter: boom('getMeter') } as MeterProvider })],
  ['a meter whose createHistogram throws', () => ({ meter: brokenMeter('createHistogram') })],
  ['a meter whose createGauge throws', () => ({ meter: brokenMeter('createGauge') })],
  ['instruments whose record throws', () => ({ meter: brokenMeter('record') })],
];

describe('a throwing meter never reaches the caller', () => {
  it.each(cases)('%s: every recorder returns, one diag warning, the next healthy meter records', async (_, make) => {
    const options = make();
    for (let i = 0; i < 3; i += 1) {
      expect(gym.recordRolloutDuration(125, options)).toBeUndefined();
      expect(gym.recordVerify(40, true, options)).toBeUndefined();
      expect(gym.recordActiveServers(3, options)).toBeUndefined();
    }
    const reported = logger.from('@gym/metrics:');
    expect(reported).toHaveLength(1);
    expect(reported[0]?.level).toBe('warn');
    expect(reported[0]?.message).toMatch(/: Error: \w+( \w+)? failed$/);

    // Survived: the same process records into a healthy meter afterwards.
    gym.recordRolloutDuration(125, { meterProvider: harness.meterProvider });
    gym.recordVerify(40, false, { meterProvider: harness.meterProvider });
    const collected = await harness.collect();
    expect(histogramPoint(collected, METRIC_ROLLOUT_DURATION).sum).toBe(125);
    // The tally kept counting through the failures: 3 ok (failed to export) + 1 failed.
    expect(gaugeValue(collected, METRIC_VERIFY_SUCCESS_RATE)).toBeCloseTo(0.75, 12);
  });

  it('a global provider that throws, while exporting without injection', () => {
    metrics.setGlobalMeterProvider({ getMeter: boom('global getMeter') } as MeterProvider);
    setTelemetryState({ metricsExporting: true, tracesExporting: false, spanGroups: [], orchestrator: true });
    expect(() => {
      gym.recordRolloutDuration(125);
      gym.recordVerify(40, true);
      gym.recordActiveServers(3);
    }).not.toThrow();
    expect(logger.from('@gym/metrics:')).toHaveLength(1);
    expect(logger.from('@gym/metrics:')[0]?.message).toContain('global getMeter failed');
  });
});

describe('a diag logger that throws never reaches the caller', () => {
  it('on every path that speaks: bad input, a failing meter, the refusal', async () => {
    const throwing = installThrowingDiagLogger();
    const broken = { meter: brokenMeter('createHistogram') };
    const good = { meterProvider: harness.meterProvider };
    expect(() => {
      gym.recordRolloutDuration(Number.NaN, good);
      gym.recordVerify(-1, false, good);
      gym.recordVerify(1, 'yes' as unknown as boolean, good);
      gym.recordActiveServers(2.5, good);
      gym.recordRolloutDuration(1, broken);
      gym.recordVerify(1, true, broken);
      gym.recordActiveServers(1, broken);
      gym.declareOrchestrator(false);
      gym.recordActiveServers(3, good); // refused, with a warning the logger throws on
    }).not.toThrow();
    throwing.stop();
    // Non-vacuous: the logger was reached (and threw) once per kind of trouble.
    expect(throwing.calls).toBe(6);
    // And the recorders still work afterwards.
    gym.declareOrchestrator();
    gym.recordActiveServers(4, good);
    gym.recordRolloutDuration(7, good);
    const collected = await harness.collect();
    expect(gaugeValue(collected, METRIC_SERVERS_ACTIVE)).toBe(4);
    expect(histogramPoint(collected, METRIC_ROLLOUT_DURATION).sum).toBe(7);
  });

  it('when the meter getter throws too', () => {
    const throwing = installThrowingDiagLogger();
    expect(() => gym.recordVerify(1, true, throwingGetters)).not.toThrow();
    throwing.stop();
    expect(throwing.calls).toBe(1);
  });
});

describe('null means "not injected"', () => {
  it('{ meter: null } and { meterProvider: null } record nothing and say nothing while nothing exports', async () => {
    for (const options of [{ meter: null }, { meterProvider: null }, { meter: null, meterProvider: null }, null]) {
      expect(() => {
        gym.recordRolloutDuration(125, options);
        gym.recordVerify(40, true, options);
        gym.recordActiveServers(3, options);
      }).not.toThrow();
    }
    expect((await harness.collect()).size).toBe(0);
    expect(logger.from('@gym/metrics:')).toEqual([]);
  });

  it('{ meter: null } records on the global provider while it exports, like no options at all', async () => {
    metrics.setGlobalMeterProvider(harness.meterProvider);
    gym.recordRolloutDuration(125, { meter: null });
    gym.recordVerify(40, true, { meter: null, meterProvider: null });
    gym.recordActiveServers(3, { meterProvider: null });
    const collected = await harness.collect();
    expect(histogramPoint(collected, METRIC_ROLLOUT_DURATION).sum).toBe(125);
    expect(gaugeValue(collected, METRIC_VERIFY_SUCCESS_RATE)).toBe(1);
    expect(gaugeValue(collected, METRIC_SERVERS_ACTIVE)).toBe(3);
    expect(logger.from('@gym/metrics:')).toEqual([]);
  });

  it('{ meter: null, meterProvider } uses the provider', async () => {
    gym.recordRolloutDuration(9, { meter: null, meterProvider: harness.meterProvider });
    expect(histogramPoint(await harness.collect(), METRIC_ROLLOUT_DURATION).sum).toBe(9);
  });

  it('a GymMetrics recorder built with { meter: null } follows the global provider', async () => {
    const recorder = new gym.GymMetrics({ meter: null });
    recorder.recordRolloutDuration(1);
    expect((await harness.collect()).size).toBe(0);
    metrics.setGlobalMeterProvider(harness.meterProvider);
    recorder.recordRolloutDuration(2);
    expect(histogramPoint(await harness.collect(), METRIC_ROLLOUT_DURATION).sum).toBe(2);
  });
});
