// Everything that differs by kind of limit, behind one `Gate`: `acquire()` resolves a token once
// a slot is held, `release(token)` gives it back. The limit's own queue does all the scheduling.

import { describeValue, invalidChoice } from '@gym/core/internal';
import type { AcquireReleaseLimit, MutexLike, PLimitLike, SemaphoreLike } from './types.js';

type Fn<A, R> = (arg: A) => PromiseLike<R> | R;

/** A metered limit reads its limit live: its slots, and its free slots (above 0: a call now gets one at once). */
export interface LiveReaders {
  limit: () => number;
  available: () => number;
  /** Judged by the metered limit's own counts alone (see `Admission.passes`). */
  passes?: true;
}

/** One limit as the run path sees it. */
export interface Gate {
  acquire(): Promise<unknown>;
  /** A promise when the limit frees the slot later (p-limit). */
  release(token: unknown): Promise<unknown> | undefined;
  /** Throws when `token` cannot be released (checked before the body runs). */
  check?(token: unknown): void;
  /**
   * Runs `fn(arg)` in a slot the limit's own way; `refused(arg)` when the limit fails the call
   * before `fn` ran. Only p-limit has it: there a slot held open through `acquire()` costs more.
   */
  inside?<A, R>(fn: Fn<A, R>, arg: A, refused?: (arg: A) => void): Promise<R>;
  /** A metered limit's live readers; throws when a metered limit of this kind does not allow `capacity`. */
  live(capacity: number | undefined, counts: { readonly active: number; readonly handed: number }): LiveReaders;
}

export const LIMIT_SHAPES =
  'an async-mutex Semaphore or Mutex, a p-limit limiter, an object with acquire() (and release())';

/** The TypeError of `resourcesOperation` for a value that is no limit, with telemetry on or off. */
export function notALimit(limit: unknown): TypeError {
  return new TypeError(
    `resourcesOperation: limit must be ${LIMIT_SHAPES}, a metered limit, or null for unlimited work; got ${describeValue(limit)}`,
  );
}

/** A new gate for `limit` by its shape (a function with p-limit's counts is a p-limit limiter), or `undefined` when it is no limit. */
export function gateOf(limit: unknown): Gate | undefined {
  if (typeof limit === 'function') {
    return 'activeCount' in limit && 'pendingCount' in limit ? new PLimitGate(limit as PLimitLike) : undefined;
  }
  const candidate = limit as Partial<SemaphoreLike> | null | undefined;
  if (typeof candidate?.acquire !== 'function') return undefined;
  // A lock is a class instance (methods on the prototype), not a decorator object like withTimeout().
  const isLock =
    typeof candidate.release === 'function' &&
    typeof candidate.isLocked === 'function' &&
    !Object.hasOwn(candidate, 'acquire');
  return new AcquireReleaseGate(candidate as AcquireReleaseLimit, isLock ? (candidate as SemaphoreLike) : undefined);
}

// Held weakly: a limit the caller dropped is not kept alive by its gate.
const gates = new WeakMap<object, Gate>();

export function cachedGate(limit: object): Gate | undefined {
  let gate = gates.get(limit);
  if (gate === undefined) {
    gate = gateOf(limit);
    if (gate !== undefined) gates.set(limit, gate);
  }
  return gate;
}

function badCapacity(capacity: unknown, allowed: string): RangeError {
  return invalidChoice('meteredLimit: options.capacity', capacity, allowed);
}

function isSlots(capacity: unknown): capacity is number {
  return Number.isSafeInteger(capacity) && (capacity as number) >= 1;
}

/** Throws when what `limit.acquire()` resolved cannot be given back (checked before the body runs). */
function checkReleasable(limit: AcquireReleaseLimit, token: unknown): void {
  if (typeof token === 'function' || (Array.isArray(token) && typeof token[1] === 'function')) return;
  if (typeof limit.release === 'function') return;
  throw new TypeError(
    `resourcesOperation: limit.acquire() resolved ${describeValue(token)}, which is not a release function ` +
      'nor [value, release], and the limit has no release() method; the limit cannot be released',
  );
}

/** Gives back what `limit.acquire()` resolved: the release function it resolved (alone, or as `[value, release]` like async-mutex), else `limit.release()`. */
function releaseToken(limit: AcquireReleaseLimit, token: unknown): void {
  if (typeof token === 'function') token();
  else if (Array.isArray(token) && typeof token[1] === 'function') token[1]();
  else limit.release?.();
}

/**
 * `fn(arg)` in a slot of `limit` the limit's own way, without finding its gate (an unmeasured
 * call with nothing to race): a function with p-limit's `pendingCount` is a p-limit limiter, an
 * object with `acquire()` is entered through `acquiring`, anything else is the TypeError it is
 * with telemetry on. Finding the gate cost 2-4 % of a bare call.
 */
export function enter<A, R>(limit: PLimitLike | AcquireReleaseLimit, fn: Fn<A, R>, arg: A): Promise<R> {
  if (typeof limit === 'function') {
    if ('pendingCount' in limit) return limit(fn, arg);
  } else if (typeof limit.acquire === 'function') {
    return acquiring(limit, fn, arg);
  }
  throw notALimit(limit);
}

/**
 * `fn(arg)` between `limit.acquire()` and the release of what it resolved, with no refusal hook:
 * the gate's (a `catch` in this function) cost 2-3 % of a bare call on the unmeasured way in.
 */
async function acquiring<A, R>(limit: AcquireReleaseLimit, fn: Fn<A, R>, arg: A): Promise<R> {
  const token = await limit.acquire();
  checkReleasable(limit, token);
  try {
    return await fn(arg);
  } finally {
    releaseToken(limit, token);
  }
}

/** An async-mutex Semaphore or Mutex (`lock`), or any other acquire()/release() object. */
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

  /**
   * A Mutex (no `getValue()`) has one slot. A Semaphore tells only its free units: its limit is
   * the `capacity` given, else its value plus the units held through the metered limit. Any
   * other object tells nothing: its capacity and our counts decide.
   */
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

function pendingCountOf(this: PLimitLike): number {
  return this.pendingCount;
}

/** p-limit 6 and 7. */
class PLimitGate implements Gate {
  /**
   * p-limit's own `pendingCount` getter, called directly: p-limit defines its counts on the
   * limiter function, where reading the property is a slow lookup (1–2 % of a measured call).
   */
  private readonly pending: (this: PLimitLike) => number;

  constructor(private readonly limiter: PLimitLike) {
    this.pending = Object.getOwnPropertyDescriptor(limiter, 'pendingCount')?.get ?? pendingCountOf;
  }

  /**
   * p-limit fails a call before it runs only while it is queued (`clearQueue()` with
   * `rejectOnClear`), so a call is watched only when something is queued once it was made: a call
   * p-limit 7 started at once is never (p-limit 6 queues every call for a microtask).
   */
  inside<A, R>(fn: Fn<A, R>, arg: A, refused?: (arg: A) => void): Promise<R> {
    // A closure, not `limiter(fn, arg)`: p-limit copies its arguments twice (about 1 % of a measured call).
    const running = this.limiter(() => fn(arg));
    if (refused !== undefined && this.pending.call(this.limiter) > 0) running.then(undefined, () => refused(arg));
    return running;
  }

  /** A slot held open inside `limiter(...)`: `release()` ends it, `done` settles once p-limit freed it. */
  acquire(): Promise<unknown> {
    return new Promise((held, refused) => {
      // p-limit starts a function a microtask later at the earliest, so `done` is set by then.
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
    // p-limit 6 queues every call for a microtask before it starts it, so pending calls count as
    // taken (once it settles, calls are pending only while every slot is held).
    return { limit, available: () => Math.max(0, limit() - limiter.activeCount - limiter.pendingCount) };
  }
}
