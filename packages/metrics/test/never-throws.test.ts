// Telemetry never breaks the program it observes: whatever part of the meter throws, the
// recorders return normally, the failure is reported once through diag, and a healthy meter
// used afterwards still records.

import { METRIC_ROLLOUT_DURATION, METRIC_VERIFY_SUCCESS_RATE } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { diag, type Meter, type MeterProvider, metrics } from '@opentelemetry/api';
import { type CollectingDiagLogger, collectDiag } from './support/collecting-diag-logger.js';
import { freshMetrics, type MetricsModule } from './support/fresh-metrics.js';
import { createHarness, gaugeValue, histogramPoint, type MetricHarness } from './support/metric-harness.js';

let gym: MetricsModule;
let harness: MetricHarness;
let logger: CollectingDiagLogger;

beforeEach(async () => {
  gym = await freshMetrics();
  harness = createHarness();
  logger = collectDiag();
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
  ['a meter that is not an object', () => ({ meter: 42 as unknown as Meter })],
];

describe('a throwing meter never reaches the caller', () => {
  it.each(cases)('%s: every recorder returns, one diag error, the next healthy meter records', async (_, make) => {
    const options = make();
    for (let i = 0; i < 3; i += 1) {
      expect(gym.recordRolloutDuration(125, options)).toBeUndefined();
      expect(gym.recordVerify(40, true, options)).toBeUndefined();
      expect(gym.recordActiveServers(3, options)).toBeUndefined();
    }
    const reported = logger.ours();
    expect(reported).toHaveLength(1);
    expect(reported[0]?.level).toBe('error');
    expect(reported[0]?.args[0]).toBeInstanceOf(Error);

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
    expect(logger.ours()).toHaveLength(1);
    expect(String(logger.ours()[0]?.args[0])).toContain('global getMeter failed');
  });
});
