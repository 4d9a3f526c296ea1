// Nothing this package remembers between calls keeps a limit or a meter alive once the caller
// dropped it: a process that makes limits per job, or swaps providers, must not hold the old
// ones until some later call happens to replace them. Each test forces full collections
// (--expose-gc switched on for this file only) and waits for the WeakRef to clear.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { meteredLimit, resourcesOperation } from '@gym/operations';
import { createMetricHarness } from '@gym/test-kit';
import { expect, it } from '@jest/globals';
import { Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { providerOf } from './helpers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
setFlagsFromString('--no-expose-gc');

const OPTIONS = { operation: 'tool', executor: 'inline' } as const;

/** Whether `ref`'s target is collected within a few full collections, each in a later turn. */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setImmediate(resolve)); // a WeakRef read keeps its target until the turn ends
    gc();
    if (ref.deref() === undefined) return true;
  }
  return false;
}

it.each([
  ['p-limit', () => pLimit(2)],
  ['Semaphore', () => new Semaphore(2)],
])('a %s used once and dropped is collected', async (_kind, make) => {
  const ref = await (async () => {
    const limit = make();
    await resourcesOperation(limit, OPTIONS, () => 1);
    return new WeakRef(limit);
  })();
  expect(await collected(ref)).toBe(true);
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
  expect(await collected(ref)).toBe(true);
});
