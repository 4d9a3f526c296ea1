// Telemetry never breaks the program it observes: whatever part of the meter throws (or the
// diag logger itself), the recorders return normally, the failure is reported once through
// diag, and a healthy meter used afterwards still records. `null` in the options means "not
// injected", exactly like `undefined`.

import { INSTRUMENTS } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import {
  captureDiag,
  createMetricHarness,
  type DiagCapture,
  gaugeValue,
  histogramTotal,
  installThrowingDiagLogger,
  type MetricHarness,
} from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { diag, type Meter, type MeterProvider, metrics } from '@opentelemetry/api';
import type { MetricsOptions } from '../src/index.js';
import { freshMetrics, type MetricsModule, providerOf } from './support/fresh-metrics.js';

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

const cases: ReadonlyArray<readonly [string, () => MetricsOptions]> = [
  ['a provider whose getMeter throws', () => ({ meterProvider: { getMeter: boom('getMeter') } as MeterProvider })],
  ['a meter whose createHistogram throws', () => ({ meterProvider: providerOf(brokenMeter('createHistogram')) })],
  ['a meter whose createGauge throws', () => ({ meterProvider: providerOf(brokenMeter('createGauge')) })],
  ['instruments whose record throws', () => ({ meterProvider: providerOf(brokenMeter('record')) })],
];

describe('a throwing meter never reaches the caller', () => {
  it.each(cases)('%s: every recorder returns, one diag warning, the next healthy meter records', async (_, make) => {
    const options = make();
    for (let i = 0; i < 3; i += 1) {
      expect(new gym.GymMetrics(options).recordRolloutDuration(125)).toBeUndefined();
      expect(new gym.GymMetrics(options).recordVerify(40, true)).toBeUndefined();
      expect(new gym.GymMetrics(options).recordActiveServers(3)).toBeUndefined();
    }
    const reported = logger.from('@gym/metrics:');
    expect(reported).toHaveLength(1);
    expect(reported[0]?.level).toBe('warn');
    expect(reported[0]?.message).toMatch(/: Error: \w+( \w+)? failed$/);

    // Survived: the same process records into a healthy meter afterwards.
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordRolloutDuration(125);
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordVerify(40, false);
    const collected = await harness.collect();
    expect(histogramTotal(collected, INSTRUMENTS.rolloutDuration.name).sum).toBe(125);
    // The tally kept counting through the failures: 3 ok (failed to export) + 1 failed.
    expect(gaugeValue(collected, INSTRUMENTS.verifySuccessRate.name)).toBeCloseTo(0.75, 12);
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
    const broken = { meterProvider: providerOf(brokenMeter('createHistogram')) };
    const good = { meterProvider: harness.meterProvider };
    expect(() => {
      new gym.GymMetrics(good).recordRolloutDuration(Number.NaN);
      new gym.GymMetrics(good).recordVerify(-1, false);
      new gym.GymMetrics(good).recordVerify(1, 'yes' as unknown as boolean);
      new gym.GymMetrics(good).recordActiveServers(2.5);
      new gym.GymMetrics(broken).recordRolloutDuration(1);
      new gym.GymMetrics(broken).recordVerify(1, true);
      new gym.GymMetrics(broken).recordActiveServers(1);
      gym.declareOrchestrator(false);
      new gym.GymMetrics(good).recordActiveServers(3); // refused, with a warning the logger throws on
    }).not.toThrow();
    throwing.stop();
    // Non-vacuous: the logger was reached (and threw) once per kind of trouble.
    expect(throwing.calls).toBe(6);
    // And the recorders still work afterwards.
    gym.declareOrchestrator();
    new gym.GymMetrics(good).recordActiveServers(4);
    new gym.GymMetrics(good).recordRolloutDuration(7);
    const collected = await harness.collect();
    expect(gaugeValue(collected, INSTRUMENTS.serversActive.name)).toBe(4);
    expect(histogramTotal(collected, INSTRUMENTS.rolloutDuration.name).sum).toBe(7);
  });
});

describe('null means "not injected"', () => {
  it('{ meterProvider: null } and no options record nothing and say nothing while nothing exports', async () => {
    for (const options of [{ meterProvider: null }, undefined]) {
      expect(() => {
        new gym.GymMetrics(options).recordRolloutDuration(125);
        new gym.GymMetrics(options).recordVerify(40, true);
        new gym.GymMetrics(options).recordActiveServers(3);
      }).not.toThrow();
    }
    expect((await harness.collect()).size).toBe(0);
    expect(logger.from('@gym/metrics:')).toEqual([]);
  });

  it('a GymMetrics recorder built with { meterProvider: null } follows the global provider', async () => {
    const recorder = new gym.GymMetrics({ meterProvider: null });
    recorder.recordRolloutDuration(1);
    expect((await harness.collect()).size).toBe(0);
    metrics.setGlobalMeterProvider(harness.meterProvider);
    recorder.recordRolloutDuration(2);
    gym.declareOrchestrator();
    new gym.GymMetrics({ meterProvider: null }).recordActiveServers(3);
    const collected = await harness.collect();
    expect(histogramTotal(collected, INSTRUMENTS.rolloutDuration.name).sum).toBe(2);
    expect(gaugeValue(collected, INSTRUMENTS.serversActive.name)).toBe(3);
    expect(logger.from('@gym/metrics:')).toEqual([]);
  });
});
