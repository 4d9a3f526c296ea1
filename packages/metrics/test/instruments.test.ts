// The instruments as an exporter sees them (as the instrument table states them, buckets, the
// scope), where the meter comes from (injected meter, injected provider, the global provider
// while exporting), and the per-meter cache.

import { INSTRUMENTS } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import {
  captureDiag,
  createMetricHarness,
  gaugeValue,
  histogramPoint,
  histogramTotal,
  type MetricHarness,
} from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { diag, type Meter, metrics } from '@opentelemetry/api';
import { DataPointType } from '@opentelemetry/sdk-metrics';
import type { MetricsOptions } from '../src/index.js';
import { freshMetrics, type MetricsModule, providerOf } from './support/fresh-metrics.js';

let gym: MetricsModule;
const harnesses: MetricHarness[] = [];

function harness(): MetricHarness {
  const created = createMetricHarness();
  harnesses.push(created);
  return created;
}

beforeEach(async () => {
  gym = await freshMetrics();
  captureDiag();
});

afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.shutdown()));
  metrics.disable();
  setTelemetryState(undefined);
  diag.disable();
});

/** Records one value into each of the four written instruments. */
function recordAll(module: MetricsModule, options?: MetricsOptions): void {
  module.declareOrchestrator();
  new module.GymMetrics(options).recordRolloutDuration(125);
  new module.GymMetrics(options).recordVerify(40, true);
  new module.GymMetrics(options).recordActiveServers(3);
}

describe('instrument shape', () => {
  it('exports its four instruments as the instrument table states them: name, kind, unit, attribute keys', async () => {
    const h = harness();
    recordAll(gym, { meterProvider: h.meterProvider });
    const collected = await h.collect();
    const shape = [...collected.values()]
      .map((m) => ({
        name: m.descriptor.name,
        type: DataPointType[m.dataPointType],
        unit: m.descriptor.unit,
        attributes: [...new Set(m.dataPoints.flatMap((p) => Object.keys(p.attributes)))],
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
    const written = [
      INSTRUMENTS.rolloutDuration,
      INSTRUMENTS.serversActive,
      INSTRUMENTS.verifyDuration,
      INSTRUMENTS.verifySuccessRate,
    ];
    expect(shape).toEqual(
      written.map((entry) => ({
        name: entry.name,
        type: entry.kind === 'histogram' ? 'HISTOGRAM' : 'GAUGE',
        unit: entry.unit,
        attributes: [...entry.attributes],
      })),
    );
  });

  it('buckets both duration histograms at INSTRUMENTS.verifyDuration.boundaries', async () => {
    const h = harness();
    new gym.GymMetrics({ meterProvider: h.meterProvider }).recordRolloutDuration(125);
    new gym.GymMetrics({ meterProvider: h.meterProvider }).recordVerify(3_600_001, true);
    const collected = await h.collect();
    const rollout = histogramPoint(collected, INSTRUMENTS.rolloutDuration.name);
    const verify = histogramPoint(collected, INSTRUMENTS.verifyDuration.name);
    expect(rollout.buckets.boundaries).toEqual([...INSTRUMENTS.verifyDuration.boundaries]);
    expect(verify.buckets.boundaries).toEqual([...INSTRUMENTS.verifyDuration.boundaries]);
    // 125 ms falls in (100, 250]; 3 600 001 ms in the overflow bucket above 1 h.
    expect(rollout.buckets.counts.indexOf(1)).toBe(1);
    expect(verify.buckets.counts.indexOf(1)).toBe(INSTRUMENTS.verifyDuration.boundaries.length);
  });

  it('records 0 as a valid duration and a valid count (the lower edge)', async () => {
    const h = harness();
    gym.declareOrchestrator();
    new gym.GymMetrics({ meterProvider: h.meterProvider }).recordRolloutDuration(0);
    new gym.GymMetrics({ meterProvider: h.meterProvider }).recordActiveServers(0);
    const collected = await h.collect();
    expect(histogramTotal(collected, INSTRUMENTS.rolloutDuration.name)).toEqual({ count: 1, sum: 0 });
    expect(gaugeValue(collected, INSTRUMENTS.serversActive.name)).toBe(0);
  });

  it('uses the instrumentation scope @gym/metrics', async () => {
    const h = harness();
    new gym.GymMetrics({ meterProvider: h.meterProvider }).recordRolloutDuration(1);
    expect(await h.scopes()).toEqual(['@gym/metrics']);
  });
});

describe('where the meter comes from', () => {
  it("an injected provider's meter is used as given", async () => {
    const h = harness();
    const meter = h.meterProvider.getMeter('caller-scope');
    new gym.GymMetrics({ meterProvider: providerOf(meter) }).recordRolloutDuration(7);
    expect(histogramTotal(await h.collect(), INSTRUMENTS.rolloutDuration.name).sum).toBe(7);
    expect(await h.scopes()).toEqual(['caller-scope']);
  });

  it('the global provider, when one is registered and nobody published a state', async () => {
    const h = harness();
    metrics.setGlobalMeterProvider(h.meterProvider);
    recordAll(gym);
    expect([...(await h.collect()).keys()].sort()).toEqual(
      [
        INSTRUMENTS.rolloutDuration.name,
        INSTRUMENTS.serversActive.name,
        INSTRUMENTS.verifyDuration.name,
        INSTRUMENTS.verifySuccessRate.name,
      ].sort(),
    );
  });

  it('the global provider, when the published state says metrics are exporting', async () => {
    const h = harness();
    metrics.setGlobalMeterProvider(h.meterProvider);
    setTelemetryState({ metricsExporting: true, tracesExporting: false, spanGroups: [], orchestrator: true });
    gym.recordRolloutDuration(9);
    expect(histogramTotal(await h.collect(), INSTRUMENTS.rolloutDuration.name).sum).toBe(9);
  });

  it('an injected provider records even when the published state says metrics are off', async () => {
    const h = harness();
    setTelemetryState({ metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator: false });
    new gym.GymMetrics({ meterProvider: h.meterProvider }).recordRolloutDuration(11);
    expect(histogramTotal(await h.collect(), INSTRUMENTS.rolloutDuration.name).sum).toBe(11);
  });

  it('a re-initialised process (a new global provider) gets fresh instruments on the new provider', async () => {
    const first = harness();
    metrics.setGlobalMeterProvider(first.meterProvider);
    gym.recordRolloutDuration(100);
    metrics.disable();
    const second = harness();
    metrics.setGlobalMeterProvider(second.meterProvider);
    gym.recordRolloutDuration(200);
    gym.recordRolloutDuration(300);
    expect(histogramTotal(await first.collect(), INSTRUMENTS.rolloutDuration.name)).toEqual({ count: 1, sum: 100 });
    expect(histogramTotal(await second.collect(), INSTRUMENTS.rolloutDuration.name)).toEqual({ count: 2, sum: 500 });
  });
});

describe('instrument cache', () => {
  /** A real SDK meter that also notes which instruments were asked for (it changes nothing). */
  function notingMeter(real: Meter, created: string[]): Meter {
    return new Proxy(real, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (typeof key === 'string' && key.startsWith('create')) created.push(`${key}:${String(args[0])}`);
          return value.apply(target, args);
        };
      },
    });
  }

  it('creates the four instruments once per meter, and a second meter gets its own', async () => {
    const h = harness();
    const created: string[] = [];
    const meter = notingMeter(h.meterProvider.getMeter('first'), created);
    gym.declareOrchestrator();
    for (let i = 0; i < 5; i += 1) {
      new gym.GymMetrics({ meterProvider: providerOf(meter) }).recordRolloutDuration(1);
      new gym.GymMetrics({ meterProvider: providerOf(meter) }).recordVerify(1, true);
      new gym.GymMetrics({ meterProvider: providerOf(meter) }).recordActiveServers(1);
    }
    const four = [
      `createHistogram:${INSTRUMENTS.rolloutDuration.name}`,
      `createHistogram:${INSTRUMENTS.verifyDuration.name}`,
      `createGauge:${INSTRUMENTS.verifySuccessRate.name}`,
      `createGauge:${INSTRUMENTS.serversActive.name}`,
    ];
    expect(created).toEqual(four);

    const createdOnSecond: string[] = [];
    const second = notingMeter(h.meterProvider.getMeter('second'), createdOnSecond);
    new gym.GymMetrics({ meterProvider: providerOf(second) }).recordRolloutDuration(2);
    expect(createdOnSecond).toEqual(four);
    expect(histogramTotal(await h.collect(), INSTRUMENTS.rolloutDuration.name).count).toBeGreaterThan(0);
  });

  it('an instrument that is declared but never written exports nothing', async () => {
    const h = harness();
    new gym.GymMetrics({ meterProvider: h.meterProvider }).recordRolloutDuration(5);
    expect([...(await h.collect()).keys()]).toEqual([INSTRUMENTS.rolloutDuration.name]);
  });

  it('takes the meter from an injected provider once', () => {
    const h = harness();
    const asked: string[] = [];
    const provider = {
      getMeter: (name: string) => {
        asked.push(name);
        return h.meterProvider.getMeter(name);
      },
    };
    for (let i = 0; i < 3; i += 1) new gym.GymMetrics({ meterProvider: provider }).recordRolloutDuration(1);
    expect(asked).toEqual(['@gym/metrics']);
  });
});
