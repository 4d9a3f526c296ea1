// Which kind of limit the caller passed, decided by shape (duck typing): async-mutex and p-limit
// are not dependencies, so nothing here imports them, and any version with the same public
// methods works. A metered limit (of this copy of the package or another) offers its own adapter
// under a versioned symbol. A limit is classified once and remembered (a one-entry cache in
// front of a WeakMap): classifying a p-limit limiter reads two getters, which cost more than the
// rest of the unmeasured path together, and the common case is one limit used again and again.

import { AcquireReleaseAdapter } from './acquire-release-adapter.js';
import { AsyncMutexAdapter } from './async-mutex-adapter.js';
import { type Body, LIMIT_ADAPTER, type Lifecycle, type LimitAdapter, type Tally } from './internal-types.js';
import { PLimitAdapter } from './p-limit-adapter.js';
import { NOTHING_HELD, runMeasured, runUnmeasured } from './runners.js';
import type { AcquireReleaseLimit, MutexLike, PLimitLike, SemaphoreLike } from './types.js';

/** `null`: unlimited work. Never waits; measured with a queue time of 0 and never counted as queued. */
const UNLIMITED: LimitAdapter = {
  runUnmeasured<T>(signal: AbortSignal | undefined, body: Body<T>, tally?: Tally): Promise<T> {
    if (tally !== undefined) tally.active++; // never waits: asks and holds at once
    return runUnmeasured(NOTHING_HELD, undefined, signal, body, tally);
  },
  runMeasured<T>(signal: AbortSignal | undefined, body: Body<T>, life: Lifecycle): Promise<T> {
    life.held();
    return runMeasured(NOTHING_HELD, undefined, signal, body, life);
  },
};

/** The kind of a limit, as `meteredLimit` needs to know it. */
export type LimitKind = 'semaphore' | 'mutex' | 'p-limit' | 'acquire-release' | 'metered';

const adapters = new WeakMap<object, LimitAdapter>();

/**
 * The last limit seen and its adapter: a compare instead of a map read. Holds one limit alive at
 * most, never a metered one. `resourcesOperation` reads it before calling {@link adapterFor}, so
 * that the common case inlines as one compare and the rest of the look-up stays out of its
 * caller's optimised code.
 */
export const lastSeen: { limit: unknown; adapter: LimitAdapter } = { limit: null, adapter: UNLIMITED };

/** The adapter of `limit`, or `undefined` when it is no limit at all (the caller throws a TypeError). */
export function adapterFor(limit: unknown): LimitAdapter | undefined {
  if (limit === lastSeen.limit) return lastSeen.adapter;
  if (limit === null) return UNLIMITED;
  if (typeof limit !== 'object' && typeof limit !== 'function') return undefined;
  // A metered limit carries its adapter (nothing here holds it, nor the limit: one that is no
  // longer referenced must stop being reported).
  const offered = offeredAdapter(limit);
  if (offered !== undefined) return offered;
  let adapter = adapters.get(limit);
  if (adapter === undefined) {
    adapter = classify(limit);
    if (adapter === undefined) return undefined;
    adapters.set(limit, adapter);
  }
  lastSeen.limit = limit;
  lastSeen.adapter = adapter;
  return adapter;
}

/** The kind of `limit` by its shape, or `undefined` when it is none of the kinds. */
export function kindOf(limit: unknown): LimitKind | undefined {
  if ((typeof limit !== 'object' && typeof limit !== 'function') || limit === null) return undefined;
  if (offeredAdapter(limit) !== undefined) return 'metered';
  if (typeof limit === 'function') {
    const candidate = limit as Partial<PLimitLike>;
    return typeof candidate.activeCount === 'number' && typeof candidate.pendingCount === 'number'
      ? 'p-limit'
      : undefined;
  }
  const candidate = limit as Partial<SemaphoreLike>;
  if (typeof candidate.acquire !== 'function') return undefined;
  if (
    typeof candidate.release === 'function' &&
    typeof candidate.isLocked === 'function' &&
    typeof candidate.waitForUnlock === 'function' &&
    // A class instance (methods on the prototype), not a decorator object like withTimeout().
    !Object.hasOwn(limit, 'acquire')
  ) {
    return typeof candidate.getValue === 'function' ? 'semaphore' : 'mutex';
  }
  return 'acquire-release';
}

function classify(limit: object): LimitAdapter | undefined {
  switch (kindOf(limit)) {
    case 'p-limit':
      return new PLimitAdapter(limit as PLimitLike);
    case 'semaphore':
      return new AsyncMutexAdapter(limit as SemaphoreLike, true);
    case 'mutex':
      return new AsyncMutexAdapter(limit as MutexLike, false);
    case 'acquire-release':
      return new AcquireReleaseAdapter(limit as AcquireReleaseLimit);
    default:
      return undefined;
  }
}

/** The adapter a limit of this package offers under {@link LIMIT_ADAPTER}, if it offers one. */
function offeredAdapter(limit: object): LimitAdapter | undefined {
  const offered = (limit as { [LIMIT_ADAPTER]?: unknown })[LIMIT_ADAPTER];
  if (typeof offered !== 'object' || offered === null) return undefined;
  const candidate = offered as Partial<LimitAdapter>;
  return typeof candidate.runUnmeasured === 'function' && typeof candidate.runMeasured === 'function'
    ? (offered as LimitAdapter)
    : undefined;
}
