// One registry per meter, keyed by attribute set: distinct limiters with the same names are
// summed (Gym's rule), one limiter wrapped twice is one limiter, and the global and an injected
// provider of the same meter do not hide each other. A limit that leaves the export (closed,
// here) reports an idle final state in each reader's next collection, so that what a cumulative
// reader keeps is an idle limit, never a busy one; a delta reader then drops it. The admission
// totals of the limits that left carry over, so a counter never goes backwards.

import { ATTR_CONCURRENCY_COMPONENT, ATTR_CONCURRENCY_LIMIT_NAME, INSTRUMENTS } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { AdmissionRejectedError, meteredLimit } from '@gym/operations';
import {
  capture,
  collectMetrics,
  counterValue,
  createMetricHarness,
  DeltaPullMetricReader,
  deferred,
  gaugeValue,
  PullMetricReader,
  settle,
} from '@gym/test-kit';
import { afterEach, expect, it } from '@jest/globals';
import { metrics } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { Semaphore } from 'async-mutex';
import pLimit from 'p-limit';

type Collected = Awaited<ReturnType<typeof collectMetrics>>;

/** The five gauges of the only limit exported. */
function gauges(m: Collected) {
  return {
    limit: gaugeValue(m, INSTRUMENTS.concurrencyLimit.name),
    active: gaugeValue(m, INSTRUMENTS.concurrencyActive.name),
    available: gaugeValue(m, INSTRUMENTS.concurrencyAvailable.name),
    queued: gaugeValue(m, INSTRUMENTS.concurrencyQueueDepth.name),
  };
}

afterEach(() => {
  setTelemetryState(undefined);
  metrics.disable();
});

it('two per-job pools with the same names, both in use: summed; after one closes, the other alone', async () => {
  const { meterProvider, reader } = createMetricHarness();
  const options = { component: 'resources', limitName: 'job_pool', meterProvider } as const;
  const hold = deferred();
  const older = meteredLimit(new Semaphore(2), options);
  const olderRuns = [older.run(() => hold.promise), older.run(() => hold.promise)];
  const newerRuns = await (async () => {
    using newer = meteredLimit(new Semaphore(2), options);
    const runs = [newer.run(() => hold.promise), newer.run(() => hold.promise)];
    await settle();
    expect(gauges(await collectMetrics(reader))).toEqual({ limit: 4, active: 4, available: 0, queued: 0 });
    return runs;
  })();
  expect(gauges(await collectMetrics(reader))).toEqual({ limit: 2, active: 2, available: 0, queued: 0 });
  hold.resolve();
  await Promise.all([...olderRuns, ...newerRuns]);
  expect(gauges(await collectMetrics(reader))).toEqual({ limit: 2, active: 0, available: 2, queued: 0 });
});

it('one limiter wrapped twice is one limiter, with its real counts', async () => {
  const { meterProvider, reader } = createMetricHarness();
  const options = { component: 'resources', limitName: 'twice', meterProvider } as const;
  const limiter = pLimit(2);
  const first = meteredLimit(limiter, options);
  const second = meteredLimit(limiter, options);
  const hold = deferred();
  const running = [first.run(() => hold.promise), first.run(() => hold.promise), second.run(() => hold.promise)];
  await settle();
  expect(gauges(await collectMetrics(reader))).toEqual({ limit: 2, active: 2, available: 0, queued: 1 });
  expect(second.state()).toMatchObject({ limit: 2, active: 2, queued: 1 });
  hold.resolve();
  await Promise.all(running);
});

it('the global provider also injected: a global limit and an injected one of the same names are summed', async () => {
  const { meterProvider, reader } = createMetricHarness();
  metrics.setGlobalMeterProvider(meterProvider);
  setTelemetryState({ metricsExporting: true, tracesExporting: false, spanGroups: [], orchestrator: false });
  const options = { component: 'resources', limitName: 'both_ways' } as const;
  const global = meteredLimit(new Semaphore(5), options);
  const injected = meteredLimit(new Semaphore(3), { ...options, meterProvider });
  const hold = deferred();
  const running = injected.run(() => hold.promise);
  await settle();
  expect(gauges(await collectMetrics(reader))).toEqual({ limit: 8, active: 1, available: 7, queued: 0 });
  hold.resolve();
  await running;
  expect(global.state().limit).toBe(5);
});

it('closed while busy: each reader’s next collection is idle; a cumulative reader keeps it idle, a delta reader drops it', async () => {
  const cumulative = new PullMetricReader();
  const delta = new DeltaPullMetricReader();
  const meterProvider = new MeterProvider({ readers: [cumulative, delta] });
  const limit = meteredLimit(new Semaphore(2), { component: 'resources', limitName: 'closed_busy', meterProvider });
  const hold = deferred();
  const running = [1, 2, 3].map(() => limit.run(() => hold.promise));
  await settle();
  const busy = { limit: 2, active: 2, available: 0, queued: 1 };
  expect(gauges(await collectMetrics(cumulative))).toEqual(busy);
  expect(gauges(await collectMetrics(delta))).toEqual(busy);
  limit.close();
  const idle = { limit: 2, active: 0, available: 2, queued: 0 };
  const first = await collectMetrics(cumulative); // this collection reports the final state …
  expect(gauges(first)).toEqual(idle);
  expect(gaugeValue(first, INSTRUMENTS.concurrencyOldestWait.name)).toBe(0);
  expect(gauges(await collectMetrics(delta))).toEqual(idle); // … and the other reader gets it too
  expect(gauges(await collectMetrics(cumulative))).toEqual(idle);
  expect((await collectMetrics(delta)).get(INSTRUMENTS.concurrencyActive.name)).toBeUndefined();
  hold.resolve();
  await Promise.all(running);
  expect(gauges(await collectMetrics(cumulative))).toEqual(idle);
  expect((await collectMetrics(delta)).get(INSTRUMENTS.concurrencyLimit.name)).toBeUndefined();
  await meterProvider.shutdown();
});

it('the limits that left keep their refusals in the total: the counter never goes backwards', async () => {
  const { meterProvider, reader } = createMetricHarness();
  const options = { component: 'resources', limitName: 'per_request', maxQueued: 0, meterProvider } as const;
  const first = meteredLimit(new Semaphore(1), options);
  const hold = deferred();
  const holding = first.run(() => hold.promise);
  expect((await capture(first.run(() => 1))).ok).toBe(false);
  const second = meteredLimit(new Semaphore(1), options);
  const holding2 = second.run(() => hold.promise);
  const refused = await capture(second.run(() => 1));
  expect(refused.ok === false && refused.error instanceof AdmissionRejectedError).toBe(true);
  expect(counterValue(await collectMetrics(reader), INSTRUMENTS.admissionRejected.name)).toBe(2);
  first.close();
  expect(counterValue(await collectMetrics(reader), INSTRUMENTS.admissionRejected.name)).toBe(2);
  hold.resolve();
  await Promise.all([holding, holding2]);
});

it.each([
  ['close()', (limit: { close(): void }) => limit.close()],
  ['Symbol.dispose', (limit: { [Symbol.dispose](): void }) => limit[Symbol.dispose]()],
])('%s: the limit leaves the export (idle once, then nothing) and keeps working', async (_name, close) => {
  const reader = new DeltaPullMetricReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const limit = meteredLimit(new Semaphore(2), { component: 'resources', limitName: 'closing', meterProvider });
  const before = await collectMetrics(reader);
  expect(gaugeValue(before, INSTRUMENTS.concurrencyQueueDepth.name)).toBe(0);
  close(limit);
  const attributes = { [ATTR_CONCURRENCY_COMPONENT]: 'resources', [ATTR_CONCURRENCY_LIMIT_NAME]: 'closing' };
  expect(gaugeValue(await collectMetrics(reader), INSTRUMENTS.concurrencyActive.name, attributes)).toBe(0);
  expect((await collectMetrics(reader)).get(INSTRUMENTS.concurrencyLimit.name)).toBeUndefined();
  expect(await limit.run(() => 'still limits')).toBe('still limits');
  expect(limit.state()).toMatchObject({ limit: 2, active: 0, queued: 0 });
  await meterProvider.shutdown();
});
