// Input is read from its own properties only. A value found on `Object.prototype` (a
// polluted prototype, or a key the caller never set) is not the caller's: read through it, a
// spec without `cpu` would report `cpu: 0` and an unrelated enumerable key would make every
// call fail validation. So plain data (specs, amounts, allocations, attributes, handles,
// options) is copied, own enumerable keys only, into objects without a prototype before it is
// validated or read; behaviour objects (providers, tracers, meters, contexts: class instances
// with methods on their prototypes) are kept by reference.

import { reporter } from './report.js';

/** Nesting copied; deeper values are kept by reference (no schema reads that deep). */
const MAX_DEPTH = 8;
/** Longest array copied; a longer one is kept by reference. */
const MAX_ITEMS = 1000;

/** A plain record without a prototype. */
export type OwnRecord = Record<string, unknown>;

/**
 * A copy of `value` in which every plain object (prototype `Object.prototype` or `null`) is a
 * prototype-less object holding only its own enumerable string keys, and every array holds
 * only its own items. Other values are returned as they are. Throws whatever a getter or a
 * Proxy trap of the input throws; callers turn that into an input error.
 */
export function ownSnapshot(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    if (value.length > MAX_ITEMS) return value;
    const items: unknown[] = [];
    for (let i = 0; i < value.length; i++)
      items.push(Object.hasOwn(value, i) ? ownSnapshot(value[i], depth + 1) : undefined);
    return items;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: OwnRecord = Object.create(null);
  for (const key of Object.keys(value)) copy[key] = ownSnapshot((value as OwnRecord)[key], depth + 1);
  return copy;
}

/** Marks an option whose getter threw. */
export const UNREADABLE: unique symbol = Symbol('unreadable option');

/**
 * The own property `key` of an options object, `undefined` when absent (or `options` is not
 * an object), {@link UNREADABLE} when reading it threw (reported once). Never throws: a
 * throwing option getter never fails the caller.
 */
export function ownOption(options: unknown, key: string): unknown {
  if ((typeof options !== 'object' && typeof options !== 'function') || options === null) return undefined;
  try {
    // One read first: an absent key (the common case) costs no `hasOwn`, which is slow on a miss.
    const value = (options as OwnRecord)[key];
    return value === undefined || Object.hasOwn(options, key) ? value : undefined;
  } catch (error) {
    reporter.warnOnce(`option:${key}`, `reading option ${key} threw; it was treated as unset`, error);
    return UNREADABLE;
  }
}

/** {@link ownOption} with an unreadable value treated as unset. */
export function ownOptionOrUnset(options: unknown, key: string): unknown {
  const value = ownOption(options, key);
  return value === UNREADABLE ? undefined : value;
}

/** True for an object or a function: what may be injected as a meter, tracer or provider. */
export function isObject(value: unknown): value is object {
  return (typeof value === 'object' || typeof value === 'function') && value !== null;
}

/**
 * The instrument source injected through `options` (the own properties `own` — a meter or a
 * tracer — and `provider`), or `undefined` when neither is an object: nothing is allocated on
 * the common path. A getter that throws counts as unset.
 */
export function injectedSource<Own extends string, Provider extends string>(
  options: unknown,
  own: Own,
  provider: Provider,
): Record<Own | Provider, unknown> | undefined {
  if (options === undefined || options === null) return undefined;
  const ownValue = ownOptionOrUnset(options, own);
  const providerValue = ownOptionOrUnset(options, provider);
  if (!isObject(ownValue) && !isObject(providerValue)) return undefined;
  return { [own]: ownValue, [provider]: providerValue } as Record<Own | Provider, unknown>;
}
