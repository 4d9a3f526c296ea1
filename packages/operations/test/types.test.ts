// The typed surface: real async-mutex and p-limit limits are accepted as they are, and a wrong
// operation, executor or outcome literal is a compile error (checked by `npm run typecheck`,
// which fails if any `@ts-expect-error` below stops being an error). At run time the same
// limits are driven once each, so this file can fail under jest too.

import type { Outcome } from '@gym/constants';
import type * as Operations from '@gym/operations';
import {
  type MeterableLimit,
  meteredLimit,
  type OperationContext,
  type OperationLimit,
  type ResourcesOperationOptions,
  resourcesOperation,
} from '@gym/operations';
import { describe, expect, it } from '@jest/globals';
import { Mutex, Semaphore, withTimeout } from 'async-mutex';
import pLimit from 'p-limit';

// The public types, each named once: the index re-exports all of types.ts, so removing or
// renaming one is a compile error here (`npm run typecheck`).
export type PublicTypes = [
  Operations.AcquireReleaseLimit,
  Operations.CapacityOption<Operations.PLimitLike>,
  Operations.Component,
  Operations.Executor,
  Operations.MeterableLimit,
  Operations.MeteredLimit,
  Operations.MeteredLimitOptions,
  Operations.MeteredLimitState,
  Operations.MeteredRunOptions,
  Operations.MutexLike,
  Operations.Operation,
  Operations.OperationContext,
  Operations.OperationLimit,
  Operations.Outcome,
  Operations.PLimitLike,
  Operations.ResourcesOperationOptions,
  Operations.SemaphoreLike,
];

describe('types', () => {
  it('accepts Semaphore, Mutex, p-limit, decorators, acquire/release objects and null', async () => {
    const limits: (OperationLimit | null)[] = [
      new Semaphore(2),
      new Mutex(),
      pLimit(2),
      withTimeout(new Mutex(), 1000),
      { acquire: async () => () => {} },
      { acquire: async () => undefined, release: () => {} },
      null,
    ];
    const results = await Promise.all(
      limits.map((limit, i) => resourcesOperation(limit, { operation: 'tool', executor: 'inline' }, () => i)),
    );
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('capacity: refused for p-limit, optional for a Semaphore or Mutex, required for an acquire()/release() object', () => {
    const base = { component: 'other', limitName: 'typed_capacity' } as const;
    // @ts-expect-error: a p-limit limiter tells its concurrency; a capacity means nothing there
    expect(() => meteredLimit(pLimit(2), { ...base, capacity: 2 })).toThrow(RangeError);
    // @ts-expect-error: an acquire()/release() object tells nothing: its capacity is required
    expect(() => meteredLimit({ acquire: async () => () => {} }, base)).toThrow(RangeError);
    const accepted = [
      meteredLimit(pLimit(2), base),
      meteredLimit(new Semaphore(2), base),
      meteredLimit(new Semaphore(2), { ...base, capacity: 4 }),
      meteredLimit(new Mutex(), base),
      meteredLimit({ acquire: async () => () => {} }, { ...base, capacity: 3 }),
      // A limit typed only as one of the kinds: capacity as the caller knows it.
      meteredLimit(new Semaphore(1) as MeterableLimit, { ...base, capacity: undefined }),
    ];
    expect(accepted.map((limit) => limit.state().limit)).toEqual([2, 2, 4, 1, 3, 1]);
  });

  it('rejects wrong literals at compile time (and at run time)', async () => {
    // @ts-expect-error: 'verifyy' is not an Operation
    const badOperation: ResourcesOperationOptions = { operation: 'verifyy', executor: 'inline' };
    // @ts-expect-error: 'gpu' is not an Executor
    const badExecutor: ResourcesOperationOptions = { operation: 'verify', executor: 'gpu' };
    const setBadOutcome = (op: OperationContext) => {
      // @ts-expect-error: 'timed_out' is not an Outcome
      op.outcome = 'timed_out';
    };
    const okOutcome: Outcome = 'crashed';

    await expect(resourcesOperation(null, badOperation, () => 1)).rejects.toThrow(RangeError);
    await expect(resourcesOperation(null, badExecutor, () => 1)).rejects.toThrow(RangeError);
    await expect(resourcesOperation(null, { operation: 'judge', executor: 'other' }, setBadOutcome)).rejects.toThrow(
      RangeError,
    );
    await expect(
      resourcesOperation(null, { operation: 'judge', executor: 'other' }, (op) => {
        op.outcome = okOutcome;
        return 'accepted';
      }),
    ).resolves.toBe('accepted');
  });
});
