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

/** Entries of an array or plain object rendered before `…`; with the visit budget, bounds the work. */
const RENDER_ENTRIES = 8;
/** Values visited while rendering; past it the rest is left out. */
const RENDER_VISITS = 64;

/** A `String`, `Number`, `Boolean` or `BigInt` object, which JSON writes as its primitive. */
function isBoxed(value: object): boolean {
  return value instanceof String || value instanceof Number || value instanceof Boolean || value instanceof BigInt;
}

function render(value: object): string {
  // JSON of a bounded preview: a 1e6-element array or a 1e5-key object costs a few entries,
  // not a multi-megabyte string that is then cut to 80 characters.
  let visits = 0;
  const preview = (_key: string, entry: unknown): unknown => {
    visits += 1;
    if (visits > RENDER_VISITS) return undefined;
    if (typeof entry === 'string')
      return entry.length > DESCRIBE_MAX_CHARS ? entry.slice(0, DESCRIBE_MAX_CHARS) : entry;
    if (Array.isArray(entry)) return entry.length > RENDER_ENTRIES ? [...entry.slice(0, RENDER_ENTRIES), '…'] : entry;
    if (typeof entry === 'object' && entry !== null && !isBoxed(entry)) {
      // Any other object (a plain one, a class instance, a typed array) by its first own keys.
      const shown: Record<string, unknown> = {};
      let count = 0;
      for (const key in entry) {
        if (!Object.hasOwn(entry, key)) continue;
        if (count === RENDER_ENTRIES) {
          shown['…'] = '…';
          break;
        }
        shown[key] = (entry as Record<string, unknown>)[key];
        count += 1;
      }
      return shown;
    }
    return entry;
  };
  let text: string | undefined;
  try {
    text = JSON.stringify(value, preview);
  } catch {
    text = undefined;
  }
  return text === undefined ? '{…}' : cap(text);
}
