// Nothing this package remembers between calls keeps a limit or a meter alive once the caller
// dropped it: a process that makes limits per job, or swaps providers, must not hold the old
// ones until some later call happens to replace them. The last measured call's limit and
// provider are remembered for a second (it saves finding them again on the next call), so the
// measured tests move a fake `setTimeout` past that second. Each test forces full collections
// until the WeakRef clears (`collectedByGc`).

import { meteredLimit, resourcesOperation } from '@gym/operations';
import { collectedByGc, createMetricHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
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
