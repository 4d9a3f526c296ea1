// State that every copy of a gym-telemetry package in one process must share (the verify
// tally, what was already reported) lives in one versioned global keyed by `Symbol.for`, the
// technique @opentelemetry/api uses for its own globals. The version is part of the key: an
// incompatible shape gets a new key. Within a version, a slot's shape is only ever extended.

/** The global key; `.v1` is the major version of the shared-slot contract. */
const GLOBAL_KEY: unique symbol = Symbol.for('@gym/core.shared.v1') as never;

type Holder = { [GLOBAL_KEY]?: Map<string, unknown> };

/**
 * The process-wide value named `name`, made by `create()` the first time any copy of any
 * package asks. Call it once and keep the result. `name` should carry the owning package and
 * a shape version, e.g. `'@gym/metrics/verify-tally@1'`.
 */
export function sharedSlot<T>(name: string, create: () => T): T {
  const holder = globalThis as Holder;
  let slots = holder[GLOBAL_KEY];
  if (slots === undefined) {
    slots = new Map();
    Object.defineProperty(holder, GLOBAL_KEY, { value: slots, enumerable: false, configurable: true });
  }
  if (!slots.has(name)) slots.set(name, create());
  return slots.get(name) as T;
}
