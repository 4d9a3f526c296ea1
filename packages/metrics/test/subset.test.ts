// Gym reference cases 10 and 11: `gym.server.request_duration_ms` is deliberately never
// emitted, and everything this package can emit is a subset of the five lens names minus
// that one. Proved two ways: what a real SDK exports after exercising every recorder, and
// which instruments the package asks a meter for.

import { INSTRUMENTS } from '@gym/constants';
import { captureDiag, createMetricHarness, type MetricHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { diag, type Meter } from '@opentelemetry/api';
import { freshMetrics, type MetricsModule, providerOf } from './support/fresh-metrics.js';

/** The five instruments of Gym's rollout/verify/fleet lens. */
const LENS_INSTRUMENTS = [
  INSTRUMENTS.rolloutDuration.name,
  INSTRUMENTS.verifyDuration.name,
  INSTRUMENTS.verifySuccessRate.name,
  INSTRUMENTS.serversActive.name,
  'gym.server.request_duration_ms',
] as const;
const EMITTABLE: ReadonlySet<string> = new Set(LENS_INSTRUMENTS.filter((n) => n !== 'gym.server.request_duration_ms'));

/** Every export of the package, so a new one has to be looked at here before it ships. */
const KNOWN_EXPORTS = [
  'GymMetrics',
  'declareOrchestrator',
  'isOrchestrator',
  'recordActiveServers',
  'recordRolloutDuration',
  'recordVerify',
  // Opens Gym's gym.verify span; it creates no instrument.
  'traceVerify',
];

let gym: MetricsModule;
let harness: MetricHarness;

beforeEach(async () => {
  gym = await freshMetrics();
  harness = createMetricHarness();
  captureDiag();
});

afterEach(async () => {
  await harness.shutdown();
  diag.disable();
});

/** A real SDK meter that also notes the name of every instrument asked of it. */
function notingMeter(real: Meter, names: Set<string>): Meter {
  return new Proxy(real, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (typeof key === 'string' && key.startsWith('create')) names.add(String(args[0]));
        return value.apply(target, args);
      };
    },
  });
}

describe('the deliberately unused instrument and the lens subset', () => {
  it('the instrument table has no entry for request_duration', () => {
    expect(Object.values(INSTRUMENTS).map((entry) => entry.name)).not.toContain('gym.server.request_duration_ms');
  });

  it('10 request_duration_instrument_is_deliberately_not_used: no export records it', () => {
    expect(Object.keys(gym).sort()).toEqual(KNOWN_EXPORTS);
  });

  it('11 everything emitted, after exercising every recorder, is a subset of the lens names minus request_duration', async () => {
    const asked = new Set<string>();
    const meter = notingMeter(harness.meterProvider.getMeter('@gym/metrics'), asked);
    gym.declareOrchestrator();
    for (const ms of [0, 1, 125, 3_600_001]) {
      new gym.GymMetrics({ meterProvider: providerOf(meter) }).recordRolloutDuration(ms);
      new gym.GymMetrics({ meterProvider: providerOf(meter) }).recordVerify(ms, ms % 2 === 0);
    }
    new gym.GymMetrics({ meterProvider: providerOf(meter) }).recordActiveServers(3);
    new gym.GymMetrics({ meterProvider: providerOf(meter) }).recordActiveServers(0);
    const exported = new Set((await harness.collect()).keys());

    // Non-vacuous: all four written instruments came out.
    expect([...exported].sort()).toEqual([...EMITTABLE].sort());
    for (const name of [...exported, ...asked]) expect(EMITTABLE.has(name)).toBe(true);
    expect(exported.has('gym.server.request_duration_ms')).toBe(false);
    expect(asked.has('gym.server.request_duration_ms')).toBe(false);
  });
});
