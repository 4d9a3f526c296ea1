// One way to show a bad value in a message: short, capped, and never throwing (it runs while a
// programming error is being reported, and must not replace that error with its own).

/** Longest rendering of a value, in characters, before it is cut with `…`. */
const DESCRIBE_MAX_CHARS = 80;

/**
 * `value` for a message: its type and a short rendering, e.g. `string "verfy"`,
 * `number NaN`, `object (Array) ["verify"]`, `string "aaaa…" (10000 chars)`. Never throws.
 */
export function describeValue(value: unknown): string {
  try {
    switch (typeof value) {
      case 'string': {
        const shown = JSON.stringify(cap(value));
        return value.length > DESCRIBE_MAX_CHARS ? `string ${shown} (${value.length} chars)` : `string ${shown}`;
      }
      case 'undefined':
        return 'undefined';
      case 'symbol':
        return `symbol ${cap(value.description ?? '')}`;
      case 'function':
        return 'function';
      case 'object': {
        if (value === null) return 'null';
        const tag = Array.isArray(value) ? 'Array' : Object.prototype.toString.call(value).slice(8, -1);
        return `object (${tag}) ${cap(JSON.stringify(value) ?? '{…}')}`;
      }
      default:
        return `${typeof value} ${String(value)}`;
    }
  } catch {
    return typeof value === 'object' ? 'object {…}' : 'an unprintable value';
  }
}

/** The message of a thrown value, one line, capped. Never throws. */
export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) return cap(`${error.name}: ${error.message}`.replace(/\s+/g, ' '));
  } catch {
    return 'an unprintable error';
  }
  return describeValue(error);
}

/**
 * A `RangeError` for a value outside an allowed set: names what was checked, the value,
 * and what is allowed. For programming errors in arguments, thrown at once.
 */
export function invalidChoice(what: string, value: unknown, allowed: readonly string[] | string): RangeError {
  const list = typeof allowed === 'string' ? allowed : `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`;
  return new RangeError(`${what} must be ${list}; got ${describeValue(value)}`);
}

function cap(text: string): string {
  return text.length > DESCRIBE_MAX_CHARS ? `${text.slice(0, DESCRIBE_MAX_CHARS - 1)}…` : text;
}
