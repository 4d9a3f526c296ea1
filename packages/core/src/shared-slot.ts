// State that every copy of every gym-telemetry package in one process must share: live
// counts, the verify tally, metered-limit state, what was already reported. An install that
// did not deduplicate a package loads it twice; module state would then split one number
// into two wrong halves. So the state lives in one versioned global, keyed by `Symbol.for`
// (the technique @opentelemetry/api uses for its own globals).
//
// The version is part of the key: an incompatible shape gets a new key, so an old copy never
// misreads a new one. Within a version, a slot's shape is only ever extended.

/** Major version of the shared-slot contract; part of the global key. */
export const SHARED_SLOT_VERSION = 1 as const;

const GLOBAL_KEY: unique symbol = Symbol.for('@gym/core.shared.v1') as never;

type Slots = Map<string, unknown>;
type Holder = { [GLOBAL_KEY]?: Slots };

/** Used only when the global holds something else or cannot be written: this copy's own slots. */
let ownSlots: Slots | undefined;

function slots(): Slots {
  const holder = globalThis as Holder;
  try {
    let map: unknown = holder[GLOBAL_KEY];
    if (map === undefined) {
      map = new Map();
      Object.defineProperty(holder, GLOBAL_KEY, { value: map, enumerable: false, configurable: true, writable: false });
    }
    // A real Map (not a Proxy of one, not a look-alike): its own methods work on it.
    Map.prototype.has.call(map, '');
    return map as Slots;
  } catch {
    // Something else sits at the key (a number, a frozen object, a Proxy whose traps throw) or
    // globalThis is frozen. Loading must not fail for it: this copy keeps its own slots, so
    // its state is right for itself, just not shared with another copy.
    ownSlots ??= new Map();
    return ownSlots;
  }
}

/**
 * The process-wide value named `name`, made by `create()` the first time any copy of any
 * package asks. Call it once (at module load or on first use) and keep the result: it is the
 * same object for every copy. `name` should carry the owning package and a shape version,
 * e.g. `'@gym/metrics/verify-tally@1'`.
 */
export function sharedSlot<T>(name: string, create: () => T): T {
  const map = slots();
  if (map.has(name)) return map.get(name) as T;
  const value = create();
  map.set(name, value);
  return value;
}
