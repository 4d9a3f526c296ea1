// Everything that differs by kind of limit, behind one `Gate`. The limiter's own queue does all the scheduling.

import { describeValue, invalidChoice } from '@gym/core/internal';
import type { AcquireReleaseLimit, MutexLike, PLimitLike, SemaphoreLike } from './types.js';

type Fn<A, R> = (arg: A) => PromiseLike<R> | R;

/** A limiter read live: its slots and free slots; `passes`: judged by the metered limit's own counts alone. */
export interface LiveReaders {
  limit: () => number;
  available: () => number;
  passes?: true | undefined;
}

export interface Gate {
  /** Resolves a token once a slot is held; `release(token)` gives it back (a promise: freed later). */
  acquire(): Promise<unknown>;
  release(token: unknown): Promise<unknown> | undefined;
  check?(token: unknown): void; // throws when `token` cannot be released
  /** A limiter that takes a function runs `fn(arg)` itself; `refused(arg)` when it fails the call before `fn` ran. */
  inside?<A, R>(fn: Fn<A, R>, arg: A, refused: (arg: A) => void): Promise<R>;
  /** Its live readers; throws when this kind does not allow `capacity`. */
  live(capacity: number | undefined, counts: { readonly active: number; readonly handed: number }): LiveReaders;
}

const SHAPES = 'an async-mutex Semaphore or Mutex, a p-limit limiter, an object with acquire() (and release())';
const OR = ', a metered limit, or null for unlimited work';

export function notALimit(limit: unknown, where = 'resourcesOperation', or = OR): TypeError {
  return new TypeError(`${where}: limit must be ${SHAPES}${or}; got ${describeValue(limit)}`);
}

function isFunctionLimiter(limit: unknown): limit is PLimitLike {
  return typeof limit === 'function' && 'pendingCount' in limit && 'activeCount' in limit;
}

/** A new gate for `limit` by its shape, or `undefined` when it is no limit. */
export function gateOf(limit: unknown): Gate | undefined {
  if (isFunctionLimiter(limit)) return new FunctionGate(limit);
  const candidate = limit as Partial<SemaphoreLike> | null | undefined;
  if (typeof limit === 'function' || typeof candidate?.acquire !== 'function') return undefined;
  // A lock is a class instance (methods on the prototype), not a decorator object like withTimeout().
  const isLock =
    typeof candidate.release === 'function' &&
    typeof candidate.isLocked === 'function' &&
    !Object.hasOwn(candidate, 'acquire');
  return new AcquireReleaseGate(candidate as AcquireReleaseLimit, isLock ? (candidate as SemaphoreLike) : undefined);
}

// Held weakly: a limit the caller dropped is not kept alive by its gate.
const gates = new WeakMap<object, Gate>();

export function gateFor(limit: object): Gate {
  let gate = gates.get(limit);
  if (gate === undefined) {
    gate = gateOf(limit);
    if (gate === undefined) throw notALimit(limit);
    gates.set(limit, gate);
  }
  return gate;
}

/** `fn(arg)` in a slot of `limit` (`null`: unlimited) without finding its gate: the unmeasured way in. */
export function enter<A, R>(limit: PLimitLike | AcquireReleaseLimit | null, fn: Fn<A, R>, arg: A): Promise<R> {
  if (typeof limit === 'function') {
    // One property check: a lookup on p-limit's function is slow.
    if ('pendingCount' in limit) return limit(fn, arg);
  } else if (typeof limit?.acquire === 'function') return acquiring(limit, fn, arg);
  else if (limit === null) return new Promise((resolve) => resolve(fn(arg)));
  throw notALimit(limit);
}

async function acquiring<A, R>(limit: AcquireReleaseLimit, fn: Fn<A, R>, arg: A): Promise<R> {
  const token = await limit.acquire();
  checkReleasable(limit, token);
  try {
    return await fn(arg);
  } finally {
    releaseToken(limit, token);
  }
}

function checkReleasable(limit: AcquireReleaseLimit, token: unknown): void {
  if (typeof token === 'function' || (Array.isArray(token) && typeof token[1] === 'function')) return;
  if (typeof limit.release === 'function') return;
  throw new TypeError(
    `resourcesOperation: limit.acquire() resolved ${describeValue(token)}, which is not a release function ` +
      'nor [value, release], and the limit has no release() method; the limit cannot be released',
  );
}

function releaseToken(limit: AcquireReleaseLimit, token: unknown): void {
  if (typeof token === 'function') token();
  else if (Array.isArray(token) && typeof token[1] === 'function') token[1]();
  else limit.release?.();
}

function badCapacity(capacity: unknown, allowed: string): RangeError {
  return invalidChoice('meteredLimit: options.capacity', capacity, allowed);
}

const isSlots = (capacity: unknown): capacity is number => Number.isSafeInteger(capacity) && (capacity as number) >= 1;

class AcquireReleaseGate implements Gate {
  constructor(
    private readonly limit: AcquireReleaseLimit,
    private readonly lock: SemaphoreLike | MutexLike | undefined,
  ) {}

  acquire(): Promise<unknown> {
    return this.limit.acquire();
  }

  check(token: unknown): void {
    checkReleasable(this.limit, token);
  }

  release(token: unknown): undefined {
    releaseToken(this.limit, token);
  }

  /** A Mutex has one slot; a Semaphore its `capacity`, else its value plus the units held through it; any other object its `capacity`. */
  live(capacity: number | undefined, counts: { readonly active: number; readonly handed: number }): LiveReaders {
    const lock = this.lock;
    if (lock === undefined) {
      if (!isSlots(capacity)) {
        throw badCapacity(capacity, 'a whole number from 1 up (required for an acquire()/release() limit)');
      }
      const available = () => Math.max(0, capacity - counts.active - counts.handed);
      return { limit: () => capacity, available, passes: true };
    }
    if (!('getValue' in lock)) {
      if (capacity !== undefined && capacity !== 1) throw badCapacity(capacity, 'undefined or 1 for a Mutex');
      return { limit: () => 1, available: () => (lock.isLocked() ? 0 : 1) };
    }
    if (capacity !== undefined && !isSlots(capacity)) {
      throw badCapacity(capacity, 'a whole number from 1 up, or undefined (the free units plus those held through it)');
    }
    const available = () => Math.max(0, lock.getValue());
    return { limit: capacity === undefined ? () => available() + counts.active : () => capacity, available };
  }
}

class FunctionGate implements Gate {
  /** Its own `pendingCount` getter, called directly: a property read on the function is a slow lookup. */
  private readonly pending: (this: PLimitLike) => number;

  constructor(private readonly limiter: PLimitLike) {
    this.pending = Object.getOwnPropertyDescriptor(limiter, 'pendingCount')?.get ?? (() => limiter.pendingCount);
  }

  /** It fails a call before it runs only while the call is queued (`clearQueue()`): only such a call is watched. */
  inside<A, R>(fn: Fn<A, R>, arg: A, refused: (arg: A) => void): Promise<R> {
    const running = this.limiter(() => fn(arg));
    if (this.pending.call(this.limiter) > 0) running.then(undefined, () => refused(arg));
    return running;
  }

  /** A slot held open inside `limiter(...)`: `release()` ends it, `done` settles once the limiter freed it. */
  acquire(): Promise<unknown> {
    return new Promise((held, refused) => {
      // The limiter starts a function a microtask later at the earliest, so `done` is set by then.
      const done = this.limiter(() => new Promise<void>((release) => held({ release, done })));
      done.then(undefined, refused);
    });
  }

  release(token: unknown): Promise<unknown> {
    const slot = token as { release: () => void; done: Promise<void> };
    slot.release();
    return slot.done;
  }

  live(capacity: number | undefined): LiveReaders {
    const limiter = this.limiter;
    if (capacity !== undefined) throw badCapacity(capacity, 'undefined for a p-limit limiter (read live)');
    if (typeof limiter.concurrency !== 'number') {
      throw new TypeError('meteredLimit: the p-limit limiter has no concurrency property (p-limit 6 or later)');
    }
    const limit = () => limiter.concurrency as number;
    // p-limit 6 queues every call for a microtask before it starts it: pending calls count as taken.
    return { limit, available: () => Math.max(0, limit() - limiter.activeCount - limiter.pendingCount) };
  }
}
