// One way to show a bad value in a message. A message is read by a person and may land in a
// log pipeline, so the rendering is short and capped, and describing a value never throws
// (a Proxy, a throwing toString or getter, a revoked object are all values a caller can pass).

/** Longest rendering of a value, in characters, before it is cut with `…`. */
export const DESCRIBE_MAX_CHARS = 80;

/**
 * `value` for a message: its type and a short rendering, e.g. `string "verfy"`,
 * `number NaN`, `object (Array) ["verify"]`, `string "aaaa…" (10000 chars)`. Never throws.
 */
export function describeValue(value: unknown): string {
  try {
    switch (typeof value) {
      case 'string':
        return `string ${quote(value)}`;
      case 'number':
      case 'boolean':
      case 'bigint':
        return `${typeof value} ${String(value)}`;
      case 'undefined':
        return 'undefined';
      case 'symbol':
        return `symbol ${cap(value.description ?? '')}`;
      case 'function':
        return 'function';
      default:
        return value === null ? 'null' : `object (${kind(value as object)}) ${render(value as object)}`;
    }
  } catch {
    return 'an unprintable value';
  }
}

/** The message of a thrown value, one line, capped. Never throws. */
export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) return cap(`${error.name}: ${error.message}`.replace(/\s+/g, ' '));
    return describeValue(error);
  } catch {
    return 'an unprintable error';
  }
}

/**
 * A `RangeError` for a value outside an allowed set: names what was checked, the value,
 * and what is allowed. For programming errors in arguments, thrown at once.
 */
export function invalidChoice(what: string, value: unknown, allowed: readonly string[] | string): RangeError {
  const list = typeof allowed === 'string' ? allowed : `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`;
  return new RangeError(`${what} must be ${list}; got ${describeValue(value)}`);
}

function quote(text: string): string {
  const shown = JSON.stringify(cap(text));
  return text.length > DESCRIBE_MAX_CHARS ? `${shown} (${text.length} chars)` : shown;
}

function cap(text: string): string {
  return text.length > DESCRIBE_MAX_CHARS ? `${text.slice(0, DESCRIBE_MAX_CHARS - 1)}…` : text;
}

function kind(value: object): string {
  if (Array.isArray(value)) return 'Array';
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  return tag === 'Object' ? 'Object' : tag;
}

function render(value: object): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  return text === undefined ? '{…}' : cap(text);
}
