// Every supported limit, and everything that differs by kind (its shape, the capacity it allows,
// how its slots are read live), turned into the one shape the run path knows: `acquire()`
// resolves a token once a slot is held, `release(token)` gives it back. The limit's own queue
// does all the scheduling; nothing here waits, polls or hands a slot over.

import { describeValue, invalidChoice } from '@gym/core/internal';
import type { AcquireReleaseLimit, MutexLike, PLimitLike, SemaphoreLike } from './types.js';

/** One limit as the run path sees it. */
export interface Gate {
  /** Resolves a token once one slot is held; rejects when the limit refuses. */
  acquire(): Promise<unknown>;
  /** Gives the slot of `token` back; a promise when the limit frees it later (p-limit). */
  release(token: unknown): Promise<unknown> | undefined;
  /** False when a call that finds a free slot is started at once and so can never be failed before it runs. */
  readonly failsFreeCalls: boolean;
  /** Throws when `token` cannot be released (checked before the body runs). */
  readonly check?: ((token: unknown) => void) | undefined;
  /**
   * Runs `fn(arg)` holding one slot, when nothing races the wait: the limit's own way in
   * (p-limit: `limiter(fn, arg)`), else acquire, `fn`, release. `refused(arg)` is called when
   * the limit fails the call before `fn` ran.
   */
  inside<A, R>(fn: (arg: A) => PromiseLike<R> | R, arg: A, refused?: (arg: A) => void): Promise<R>;
}

export const LIMIT_SHAPES =
  'an async-mutex Semaphore or Mutex, a p-limit limiter, an object with acquire() (and release())';

export type LimitKind = 'semaphore' | 'mutex' | 'p-limit' | 'acquire-release';

/** The kind of `limit` by its shape, or `undefined` when it is none of them. */
export function kindOf(limit: unknown): LimitKind | undefined {
  if (typeof limit === 'function') {
    const candidate = limit as Partial<PLimitLike>;
    return typeof candidate.activeCount === 'number' && typeof candidate.pendingCount === 'number'
      ? 'p-limit'
      : undefined;
  }
  if (typeof limit !== 'object' || limit === null) return undefined;
  const candidate = limit as Partial<SemaphoreLike>;
  if (typeof candidate.acquire !== 'function') return undefined;
  // A class instance (methods on the prototype), not a decorator object like withTimeout().
  if (
    typeof candidate.release === 'function' &&
    typeof candidate.isLocked === 'function' &&
    !Object.hasOwn(limit, 'acquire')
  ) {
    return typeof candidate.getValue === 'function' ? 'semaphore' : 'mutex';
  }
  return 'acquire-release';
}

/** The gate of a limit of `kind`. */
export function gateOf(limit: object, kind: LimitKind): Gate {
  if (kind === 'p-limit') return new PLimitGate(limit as PLimitLike);
  if (kind === 'acquire-release') return new AcquireReleaseGate(limit as AcquireReleaseLimit);
  return new LockGate(limit as SemaphoreLike | MutexLike);
}

/** A gate whose `inside` is its own acquire, `fn`, release. */
abstract class AcquiringGate implements Gate {
  readonly failsFreeCalls = true;
  abstract acquire(): Promise<unknown>;
  abstract release(token: unknown): undefined;
  check?(token: unknown): void;

  async inside<A, R>(fn: (arg: A) => PromiseLike<R> | R, arg: A, refused?: (arg: A) => void): Promise<R> {
    let token: unknown;
    try {
      token = await this.acquire();
      this.check?.(token);
    } catch (error) {
      refused?.(arg);
      throw error;
    }
    try {
      return await fn(arg);
    } finally {
      this.release(token);
    }
  }
}

/** async-mutex Semaphore and Mutex: their own `acquire()` and `release()`. */
class LockGate extends AcquiringGate {
  constructor(private readonly lock: SemaphoreLike | MutexLike) {
    super();
  }

  acquire(): Promise<unknown> {
    return this.lock.acquire();
  }

  release(): undefined {
    this.lock.release();
    return undefined;
  }
}

/** The token is what `acquire()` resolved: a release function, `[value, release]`, or anything (then `release()`). */
class AcquireReleaseGate extends AcquiringGate {
  constructor(private readonly limit: AcquireReleaseLimit) {
    super();
    if (typeof limit.release !== 'function') this.check = releasable;
  }

  acquire(): Promise<unknown> {
    return this.limit.acquire();
  }

  release(token: unknown): undefined {
    if (typeof token === 'function') token();
    else if (Array.isArray(token) && typeof token[1] === 'function') token[1]();
    else this.limit.release?.();
    return undefined;
  }
}

function releasable(value: unknown): void {
  if (typeof value === 'function' || (Array.isArray(value) && typeof value[1] === 'function')) return;
  throw new TypeError(
    `resourcesOperation: limit.acquire() resolved ${describeValue(value)}, which is not a release function ` +
      'nor [value, release], and the limit has no release() method; the limit cannot be released',
  );
}

/**
 * p-limit 6 and 7: a slot is a function handed to the limiter that holds it open until released.
 * Releasing settles that function's promise; `done` settles once p-limit has freed the slot, so
 * an operation that returned never leaves p-limit counting it active.
 */
interface PLimitSlot {
  readonly held: (slot: PLimitSlot) => void;
  release: () => void;
  done: Promise<unknown>;
}

function holdOpen(slot: PLimitSlot): Promise<void> {
  return new Promise((release) => {
    slot.release = release;
    slot.held(slot);
  });
}

function nothing(): void {}

class PLimitGate implements Gate {
  readonly failsFreeCalls = false;

  constructor(private readonly limiter: PLimitLike) {}

  inside<A, R>(fn: (arg: A) => PromiseLike<R> | R, arg: A, refused?: (arg: A) => void): Promise<R> {
    const running = this.limiter(fn, arg);
    // p-limit fails a call before it runs only on `clearQueue()` with `rejectOnClear`.
    if (refused !== undefined) running.then(undefined, () => refused(arg));
    return running;
  }

  acquire(): Promise<unknown> {
    return new Promise((held, refused) => {
      const slot = { held, release: nothing, done: undefined as unknown as Promise<unknown> };
      slot.done = this.limiter(holdOpen, slot);
      slot.done.then(undefined, refused);
    });
  }

  release(token: unknown): Promise<unknown> {
    const slot = token as PLimitSlot;
    slot.release();
    return slot.done;
  }
}

// Held weakly: a limit the caller dropped is not kept alive by its gate.
const gates = new WeakMap<object, Gate>();

/** The gate of a raw limit (made once per limit), or `undefined` when it is no limit. */
export function cachedGate(limit: object): Gate | undefined {
  let gate = gates.get(limit);
  if (gate === undefined) {
    const kind = kindOf(limit);
    if (kind === undefined) return undefined;
    gate = gateOf(limit, kind);
    gates.set(limit, gate);
  }
  return gate;
}

/** Throws when `capacity` is not allowed for a limit of `kind`. */
export function checkCapacity(kind: LimitKind, limit: unknown, capacity: unknown): void {
  const what = 'meteredLimit: options.capacity';
  const positive = Number.isSafeInteger(capacity) && (capacity as number) >= 1;
  if (kind === 'p-limit') {
    if (capacity !== undefined) throw invalidChoice(what, capacity, 'undefined for a p-limit limiter (read live)');
    if (typeof (limit as PLimitLike).concurrency !== 'number') {
      throw new TypeError('meteredLimit: the p-limit limiter has no concurrency property (p-limit 6 or later)');
    }
  } else if (kind === 'mutex') {
    if (capacity !== undefined && capacity !== 1) throw invalidChoice(what, capacity, 'undefined or 1 for a Mutex');
  } else if (kind === 'semaphore') {
    if (capacity !== undefined && !positive) {
      throw invalidChoice(what, capacity, "a whole number from 1 up, or undefined (a Semaphore's value is read live)");
    }
  } else if (!positive) {
    throw invalidChoice(what, capacity, 'a whole number from 1 up (required for an acquire()/release() limit)');
  }
}

/** How a limit of `kind` tells whether a slot is free, its slots and its free slots, read live. */
export function liveReaders(
  limit: unknown,
  kind: LimitKind,
  capacity: number | undefined,
  counts: { readonly active: number },
): { free: () => boolean; limit: () => number; available: () => number } {
  if (kind === 'p-limit') {
    const limiter = limit as PLimitLike;
    const concurrency = () => limiter.concurrency ?? Number.POSITIVE_INFINITY;
    // p-limit 6 queues every call for a microtask before it starts it, so pending calls count
    // as taken (once it settles, calls are pending only while every slot is held).
    const taken = () => limiter.activeCount + limiter.pendingCount;
    return {
      free: () => taken() < (limiter.concurrency ?? Number.POSITIVE_INFINITY),
      limit: concurrency,
      available: () => Math.max(0, concurrency() - taken()),
    };
  }
  if (kind === 'semaphore') {
    // `getValue()` is the free units; the units held through this metered limit add up to its limit.
    const semaphore = limit as SemaphoreLike;
    const free = () => Math.max(0, semaphore.getValue());
    return { free: () => !semaphore.isLocked(), limit: () => free() + counts.active, available: free };
  }
  if (kind === 'mutex') {
    const mutex = limit as MutexLike;
    return { free: () => !mutex.isLocked(), limit: () => 1, available: () => (mutex.isLocked() ? 0 : 1) };
  }
  // An acquire()/release() object tells nothing: its capacity and this limit's own count decide.
  const slots = capacity as number;
  return {
    free: () => counts.active < slots,
    limit: () => slots,
    available: () => Math.max(0, slots - counts.active),
  };
}
