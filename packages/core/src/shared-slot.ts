// State that every copy of a gym-telemetry package in one process must share (the verify
// tally, what was already reported) lives in one global Map keyed by `Symbol.for`, as
// @opentelemetry/api keeps its own globals. `.v1` is the version of this contract; a slot's
// name carries its owner and shape version (`'@gym/metrics/verify-tally@1'`), and a shape is
// only ever extended under one name.

const GLOBAL_KEY: unique symbol = Symbol.for('@gym/core.shared.v1') as never;

/** The process-wide value named `name`, made by `create()` the first time any copy asks. */
export function sharedSlot<T>(name: string, create: () => T): T {
  const holder = globalThis as { [GLOBAL_KEY]?: Map<string, unknown> };
  let slots = holder[GLOBAL_KEY];
  if (slots === undefined) {
    slots = new Map();
    Object.defineProperty(holder, GLOBAL_KEY, { value: slots, configurable: true });
  }
  if (!slots.has(name)) slots.set(name, create());
  return slots.get(name) as T;
}
