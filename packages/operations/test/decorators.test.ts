// async-mutex decorators are acquire()/release() objects that keep their own semantics: a
// timeout or "already locked" rejects the operation before its body runs, and every unit that
// was taken is given back.

import { resourcesOperation } from '@gym/operations';
import { capture, deferred, settle } from '@gym/test-kit';
import { afterEach, expect, it, jest } from '@jest/globals';
import { E_ALREADY_LOCKED, E_TIMEOUT, Mutex, Semaphore, tryAcquire, withTimeout } from 'async-mutex';

import { useFakeTimers } from './helpers.js';

const OPTIONS = { operation: 'tool', executor: 'inline' } as const;

afterEach(() => {
  jest.useRealTimers();
});

it.each<[string, () => { inner: { isLocked(): boolean }; limit: { acquire(): Promise<unknown> } }]>([
  [
    'Semaphore',
    () => {
      const inner = new Semaphore(1);
      return { inner, limit: withTimeout(inner, 10) };
    },
  ],
  [
    'Mutex',
    () => {
      const inner = new Mutex();
      return { inner, limit: withTimeout(inner, 10) };
    },
  ],
])('withTimeout(%s): a wait past its timeout rejects with E_TIMEOUT and never runs the body', async (_kind, make) => {
  useFakeTimers();
  const { inner, limit } = make();
  const hold = deferred();
  const holder = resourcesOperation(limit, OPTIONS, () => hold.promise);
  await jest.advanceTimersByTimeAsync(0);
  let ran = false;
  const waiting = capture(
    resourcesOperation(limit, OPTIONS, () => {
      ran = true;
    }),
  );
  await jest.advanceTimersByTimeAsync(10);
  expect(await waiting).toEqual({ ok: false, error: E_TIMEOUT });
  expect(ran).toBe(false);
  hold.resolve();
  await holder;
  await settle(); // withTimeout gives back the late grant of the waiter it timed out
  expect(inner.isLocked()).toBe(false);
});

it('tryAcquire(Semaphore): a held semaphore rejects at once with E_ALREADY_LOCKED', async () => {
  const semaphore = new Semaphore(1);
  const limit = tryAcquire(semaphore);
  const hold = deferred();
  const holder = resourcesOperation(limit, OPTIONS, () => hold.promise);
  await Promise.resolve();
  expect(await capture(resourcesOperation(limit, OPTIONS, () => 'never'))).toEqual({
    ok: false,
    error: E_ALREADY_LOCKED,
  });
  hold.resolve();
  await holder;
  expect(semaphore.getValue()).toBe(1);
});
