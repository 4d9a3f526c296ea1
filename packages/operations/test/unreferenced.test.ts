// One attribute set is one exported limit. A metered limit made per request by mistake (10,000
// of them, each no longer referenced) exports the newest one's numbers, not a sum of every limit
// the garbage collector has not reached yet; the replaced limits' admission totals carry over,
// so the counter never goes backwards. close() and `using` take a limit out of the export at once.

import {
  ATTR_CONCURRENCY_LIMIT_NAME,
  METRIC_CONCURRENCY_ADMISSION_REJECTED,
  METRIC_CONCURRENCY_LIMIT,
  METRIC_CONCURRENCY_QUEUE_DEPTH,
} from '@gym/constants';
import { AdmissionRejectedError, meteredLimit } from '@gym/operations';
import {
  capture,
  collectMetrics,
  counterValue,
  createMetricHarness,
  DeltaPullMetricReader,
  deferred,
  gaugeValue,
} from '@gym/test-kit';
import { expect, it } from '@jest/globals';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { Semaphore } from 'async-mutex';
import pLimit from 'p-limit';

const NAME = { [ATTR_CONCURRENCY_LIMIT_NAME]: 'per_request' };

it('10,000 limits of one attribute set, made and dropped: the newest is exported, not their sum', async () => {
  const { meterProvider, reader } = createMetricHarness();
  for (let i = 0; i < 10_000; i++) {
    meteredLimit(pLimit(2), { component: 'resources', limitName: 'per_request', meterProvider });
  }
  const m = await collectMetrics(reader);
  expect(m.get(METRIC_CONCURRENCY_LIMIT)?.dataPoints).toHaveLength(1);
  expect(gaugeValue(m, METRIC_CONCURRENCY_LIMIT, { 'nemo.gym.concurrency.component': 'resources', ...NAME })).toBe(2);
});

it('the replaced limit’s refusals carry over to the newer one: the counter never goes backwards', async () => {
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
  const m = await collectMetrics(reader);
  expect(counterValue(m, METRIC_CONCURRENCY_ADMISSION_REJECTED)).toBe(2);
  hold.resolve();
  await Promise.all([holding, holding2]);
});

it.each([
  ['close()', (limit: { close(): void }) => limit.close()],
  ['Symbol.dispose', (limit: { [Symbol.dispose](): void }) => limit[Symbol.dispose]()],
])('%s: the limit leaves the export at once and keeps working', async (_name, close) => {
  const reader = new DeltaPullMetricReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const limit = meteredLimit(new Semaphore(2), { component: 'resources', limitName: 'closing', meterProvider });
  const before = await collectMetrics(reader);
  expect(gaugeValue(before, METRIC_CONCURRENCY_QUEUE_DEPTH)).toBe(0);
  close(limit);
  const after = await collectMetrics(reader);
  expect(after.get(METRIC_CONCURRENCY_LIMIT)).toBeUndefined();
  expect(await limit.run(() => 'still limits')).toBe('still limits');
  expect(limit.state()).toMatchObject({ limit: 2, active: 0, queued: 0 });
  await meterProvider.shutdown();
});
