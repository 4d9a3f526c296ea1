// Nothing this package remembers between calls keeps a limit or a meter alive once the caller
// dropped it: a process that makes limits per job, or swaps providers, must not hold the old
// ones until some later call happens to replace them. Each test forces full collections until
// the WeakRef clears (`collectedByGc`).

import { meteredLimit, resourcesOperation } from '@gym/operations';
import { collectedByGc, createMetricHarness } from '@gym/test-kit';
import { expect, it } from '@jest/globals';
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

it('the meter of a provider no longer used is collected, though its series was the last one measured', async () => {
  const ref = await (async () => {
    const meter = createMetricHarness().meterProvider.getMeter('dropped');
    await resourcesOperation(null, { ...OPTIONS, meterProvider: providerOf(meter) }, () => 1);
    return new WeakRef(meter);
  })();
  // Another provider is resolved (by a metered limit), but no other operation is measured.
  const { meterProvider } = createMetricHarness();
  meteredLimit(new Semaphore(1), { component: 'other', limitName: 'gc_other', meterProvider }).close();
  expect(await collectedByGc(ref)).toBe(true);
});
