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
  if (kind === 'p-limit') return pLimitGate(limit as PLimitLike);
  if (kind === 'acquire-release') return withInside(acquireReleaseGate(limit as AcquireReleaseLimit));
  const lock = limit as SemaphoreLike | MutexLike;
  return withInside({
    acquire: () => lock.acquire(),
    release: () => {
      lock.release();
      return undefined;
    },
  });
}

/** `entry` with `inside` made of its own acquire and release. */
function withInside(entry: Omit<Gate, 'inside'>): Gate {
  const gate = entry as Gate;
  gate.inside = async (fn, arg, refused) => {
    let token: unknown;
    try {
      token = await entry.acquire();
      entry.check?.(token);
    } catch (error) {
      refused?.(arg);
      throw error;
    }
    try {
      return await fn(arg);
    } finally {
      entry.release(token);
    }
  };
  return gate;
}

/** One call held open inside p-limit: settling `release` ends it, `done` settles once p-limit freed the slot. */
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

function pLimitGate(limiter: PLimitLike): Gate {
  return {
    inside: (fn, arg, refused) => {
      const running = limiter(fn, arg);
      // p-limit fails a call before it runs only on `clearQueue()` with `rejectOnClear`.
      if (refused !== undefined) running.then(undefined, () => refused(arg));
      return running;
    },
    acquire: () =>
      new Promise((held, refused) => {
        const slot = { held, release: nothing, done: undefined as unknown as Promise<unknown> };
        slot.done = limiter(holdOpen, slot);
        slot.done.then(undefined, refused);
      }),
    release: (token) => {
      const slot = token as PLimitSlot;
      slot.release();
      return slot.done;
    },
  };
}

/** The token is what `acquire()` resolved: a release function, `[value, release]`, or anything (then `release()`). */
function acquireReleaseGate(limit: AcquireReleaseLimit): Omit<Gate, 'inside'> {
  return {
    acquire: () => limit.acquire(),
    check: typeof limit.release === 'function' ? undefined : releasable,
    release: (token) => {
      if (typeof token === 'function') token();
      else if (Array.isArray(token) && typeof token[1] === 'function') token[1]();
      else limit.release?.();
      return undefined;
    },
  };
}

function releasable(value: unknown): void {
  if (typeof value === 'function' || (Array.isArray(value) && typeof value[1] === 'function')) return;
  throw new TypeError(
    `resourcesOperation: limit.acquire() resolved ${describeValue(value)}, which is not a release function ` +
      'nor [value, release], and the limit has no release() method; the limit cannot be released',
  );
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
    const available = () => Math.max(0, concurrency() - limiter.activeCount - limiter.pendingCount);
    return { free: () => available() > 0, limit: concurrency, available };
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
