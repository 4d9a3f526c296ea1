// Nothing this package remembers between calls keeps a limit or a meter alive once the caller
// dropped it: a process that makes limits per job, or swaps providers, must not hold the old
// ones until some later call happens to replace them. The last measured call's limit and
// provider are remembered for a second (it saves finding them again on the next call), so the
// measured tests move a fake `setTimeout` past that second. Each test forces full collections
// until the WeakRef clears (`collectedByGc`).

import { ATTR_CONCURRENCY_COMPONENT, ATTR_CONCURRENCY_LIMIT_NAME, INSTRUMENTS } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { meteredLimit, resourcesOperation } from '@gym/operations';
import { collectedByGc, collectMetrics, createMetricHarness, gaugeValue } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { providerOf } from './helpers.js';

const OPTIONS = { operation: 'tool', executor: 'inline' } as const;

it.each([
  ['p-limit', () => pLimit(2)],
  ['Semaphore', () => new Semaphore(2)],
])('a %s used once and dropped is collected', async (_kind, make) => {
  const ref = await (async () => {
    const limit = make();
    await resourcesOperation(limit, OPTIONS, () => 1);
    return new WeakRef(limit);
  })();
  expect(await collectedByGc(ref)).toBe(true);
});

describe('a metered limit is held weakly: once collected, it leaves the export with an idle final state', () => {
  afterEach(() => {
    setTelemetryState(undefined);
    metrics.disable();
  });

  it('an unreferenced global limit: a delta reader sees it idle once after the collection, then nothing', async () => {
    const { meterProvider, reader } = createMetricHarness({ temporality: AggregationTemporality.DELTA });
    metrics.setGlobalMeterProvider(meterProvider);
    setTelemetryState({ metricsExporting: true, tracesExporting: false, spanGroups: [], orchestrator: false });
    const ref = await (async () => {
      const limit = meteredLimit(new Semaphore(2), { component: 'other', limitName: 'dropped_global' });
      await limit.run(() => 1);
      return new WeakRef(limit);
    })();
    expect(gaugeValue(await collectMetrics(reader), INSTRUMENTS.concurrencyLimit.name)).toBe(2);
    expect(await collectedByGc(ref)).toBe(true);
    const last = await collectMetrics(reader);
    expect([
      gaugeValue(last, INSTRUMENTS.concurrencyActive.name),
      gaugeValue(last, INSTRUMENTS.concurrencyQueueDepth.name),
    ]).toEqual([0, 0]);
    expect((await collectMetrics(reader)).get(INSTRUMENTS.concurrencyLimit.name)).toBeUndefined();
  });

  it('10,000 limits of one attribute set made and dropped are summed until collected, then leave', async () => {
    const { meterProvider, reader } = createMetricHarness();
    const ref = (() => {
      let last: object | undefined;
      for (let i = 0; i < 10_000; i++) {
        last = meteredLimit(pLimit(2), { component: 'resources', limitName: 'per_request', meterProvider });
      }
      return new WeakRef(last as object);
    })();
    const name = { [ATTR_CONCURRENCY_COMPONENT]: 'resources', [ATTR_CONCURRENCY_LIMIT_NAME]: 'per_request' };
    expect(gaugeValue(await collectMetrics(reader), INSTRUMENTS.concurrencyLimit.name, name)).toBe(20_000);
    expect(await collectedByGc(ref)).toBe(true);
    const after = await collectMetrics(reader); // what a cumulative reader keeps from now on: idle
    expect(gaugeValue(after, INSTRUMENTS.concurrencyActive.name, name)).toBe(0);
    expect(gaugeValue(after, INSTRUMENTS.concurrencyQueueDepth.name, name)).toBe(0);
  });
});

describe('measured', () => {
  // Only the timer that forgets the last call is fake; what collectedByGc awaits stays real.
  beforeEach(() => {
    jest.useFakeTimers({
      doNotFake: ['Date', 'hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate'],
    });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('the meter of a provider no longer used is collected a second after its series was the last one measured', async () => {
    const ref = await (async () => {
      const meter = createMetricHarness().meterProvider.getMeter('dropped');
      await resourcesOperation(null, { ...OPTIONS, meterProvider: providerOf(meter) }, () => 1);
      return new WeakRef(meter);
    })();
    // Another provider is resolved (by a metered limit), but no other operation is measured.
    const { meterProvider } = createMetricHarness();
    meteredLimit(new Semaphore(1), { component: 'other', limitName: 'gc_other', meterProvider }).close();
    jest.advanceTimersByTime(1000);
    expect(await collectedByGc(ref)).toBe(true);
  });

  it.each([
    ['p-limit', () => pLimit(2)],
    ['Semaphore', () => new Semaphore(2)],
  ])('a %s measured last and dropped is collected a second later', async (_kind, make) => {
    const { meterProvider } = createMetricHarness();
    const ref = await (async () => {
      const limit = make();
      await resourcesOperation(limit, { ...OPTIONS, meterProvider }, () => 1);
      return new WeakRef(limit);
    })();
    jest.advanceTimersByTime(1000);
    expect(await collectedByGc(ref)).toBe(true);
  });
});
