// How every gym-telemetry package speaks about trouble: the failure policy, a short rendering of a
// bad value, and `diag.warn` once per kind of trouble per process (a broken meter fails on every
// call: a line per call would flood the logs). Reporting is not caching: the next call tries again.

import { diag } from '@opentelemetry/api';

// What every copy of every gym-telemetry package in a process shares, in one global Map. A slot's
// name carries its owner and shape version (`'@gym/metrics/verify-tally@1'`); a shape only grows.
const GLOBAL_KEY: unique symbol = Symbol.for('@gym/core.shared.v1') as never;

/** The process-wide value named `name`, made by `create()` the first time any copy asks. */
export function sharedSlot<T>(name: string, create: () => T): T {
  const holder = globalThis as { [GLOBAL_KEY]?: Map<string, unknown> };
  const slots = holder[GLOBAL_KEY] ?? new Map<string, unknown>();
  if (holder[GLOBAL_KEY] === undefined) Object.defineProperty(holder, GLOBAL_KEY, { value: slots, configurable: true });
  if (!slots.has(name)) slots.set(name, create());
  return slots.get(name) as T;
}

/** The failure policy of every gym-telemetry package, word for word as each README states it. */
export const FAILURE_POLICY =
  'Telemetry never throws into your code and never changes what your code returns; a programming error in arguments throws at once, naming the value and what is allowed.' as const;

const MAX_CHARS = 80;

function cap(text: string): string {
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS - 1)}…` : text;
}

/** `text` as a JSON string, cut at 80 characters with `…` and its length when longer. */
export function quote(text: string): string {
  return text.length > MAX_CHARS ? `${JSON.stringify(cap(text))} (${text.length} chars)` : JSON.stringify(text);
}

/** `value` for a message: its type and a short rendering (`string "verfy"`, `object (Array) ["verify"]`). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined || typeof value === 'function') return typeof value;
  if (typeof value === 'string') return `string ${quote(value)}`;
  if (typeof value === 'symbol') return `symbol ${cap(value.description ?? '')}`;
  if (typeof value !== 'object') return `${typeof value} ${String(value)}`;
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  try {
    return `object (${tag}) ${cap(JSON.stringify(value) ?? '{…}')}`;
  } catch {
    return `object (${tag}) {…}`; // a cycle or a BigInt: this runs while an error is reported
  }
}

/** The message of a thrown value, one line, capped. */
export function describeError(error: unknown): string {
  return error instanceof Error ? cap(`${error.name}: ${error.message}`.replace(/\s+/g, ' ')) : describeValue(error);
}

/** The `RangeError` of a programming error in arguments: what was checked, the value, what is allowed. */
export function invalidChoice(what: string, value: unknown, allowed: readonly string[] | string): RangeError {
  const list = typeof allowed === 'string' ? allowed : `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`;
  return new RangeError(`${what} must be ${list}; got ${describeValue(value)}`);
}

const reported = sharedSlot('@gym/core/reported@1', () => new Set<string>());

export type Reporter = ReturnType<typeof createReporter>;

/** The once-only reporter of the package named `packageName` (e.g. `@gym/metrics`). */
export function createReporter(packageName: string) {
  return {
    /** Writes `message` (built only when written) and `error` the first time this package reports `kind`. Never throws. */
    warnOnce(kind: string, message: string | (() => string), error?: unknown): void {
      const key = `${packageName}\u0000${kind}`;
      if (reported.has(key)) return;
      reported.add(key);
      try {
        const text = `${packageName}: ${typeof message === 'function' ? message() : message}`;
        diag.warn(error === undefined ? text : `${text}: ${describeError(error)}`);
      } catch {
        // A throwing logger (or message builder) must not reach the caller.
      }
    },
  };
}
