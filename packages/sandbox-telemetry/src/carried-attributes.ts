// The identity attributes a sandbox's records carry (the request id plus whatever the caller
// adds, e.g. `nemo.gym.sandbox.provider`). They are checked once, when handed in, and frozen:
// every later record reuses the same object instead of rebuilding it.
//
// Caller attributes are capped (count and string length, one warning), and every record
// writes this package's own keys first and the caller's last: the SDK keeps the first
// `attributeCountLimit` keys of a span and drops later ones, so it is always a caller key
// that goes, never the request id, the requested shape or the final-sample flag.

import { SANDBOX_ATTRIBUTE_PREFIX } from '@gym/constants';
import { describeError } from '@gym/core';
import type { Attributes } from '@opentelemetry/api';
import {
  ALLOCATION_PREFIX,
  ATTR_SANDBOX_ID,
  ATTR_SANDBOX_REQUEST_ID,
  REQUESTED_PREFIX,
  RESOURCE_PREFIX,
} from './attribute-keys.js';
import { type InputProblem, SandboxInputError } from './input-error.js';
import { type OwnRecord, ownSnapshot } from './own-data.js';
import { reporter } from './report.js';
import type { SandboxAttributes } from './types.js';

/** Most caller attributes a record carries; later ones are dropped (one warning per process). */
export const MAX_CALLER_ATTRIBUTES = 32;
/** Longest caller string value, in characters; longer ones are cut (one warning per process). */
export const MAX_CALLER_VALUE_LENGTH = 256;

/** Key families written by this package itself; a caller may not set them. */
const RESERVED_PREFIXES = [REQUESTED_PREFIX, ALLOCATION_PREFIX, RESOURCE_PREFIX] as const;

/** True for a value this package writes: a string, a boolean or a finite number. */
export function isAttributeValue(value: unknown): value is string | number | boolean {
  return (
    typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))
  );
}

/** True when `key` belongs to a family this package writes itself (requested, allocation, resource, the ids). */
export function isReservedKey(key: string): boolean {
  if (key === ATTR_SANDBOX_ID || key === ATTR_SANDBOX_REQUEST_ID) return true;
  for (const prefix of RESERVED_PREFIXES) if (key.startsWith(prefix)) return true;
  return false;
}

/**
 * Checks carried attributes (own properties only) and returns a frozen, prototype-less copy
 * with the request id (when present) first and at most {@link MAX_CALLER_ATTRIBUTES} caller
 * keys after it, string values cut to {@link MAX_CALLER_VALUE_LENGTH} characters. Keys start
 * with `nemo.gym.sandbox.` and are not reserved, except that `nemo.gym.sandbox.request.id` is
 * allowed when `allowRequestId` (attributes returned by `recordRequest`). Values are strings,
 * booleans or finite numbers. Throws {@link SandboxInputError} otherwise.
 */
export function checkCarriedAttributes(
  attributes: unknown,
  subject: string,
  allowRequestId: boolean,
): Readonly<SandboxAttributes> {
  const data = snapshot(attributes, subject);
  const problems: InputProblem[] = [];
  for (const key of Object.keys(data)) {
    const value = data[key];
    if (!key.startsWith(SANDBOX_ATTRIBUTE_PREFIX)) {
      problems.push({ path: key, value, rule: `key must start with '${SANDBOX_ATTRIBUTE_PREFIX}'` });
    } else if (isReservedKey(key) && !(allowRequestId && key === ATTR_SANDBOX_REQUEST_ID)) {
      problems.push({ path: key, value, rule: 'key is written by @gym/sandbox-telemetry itself (reserved)' });
    } else if (!isAttributeValue(value)) {
      problems.push({ path: key, value, rule: 'value must be a string, a boolean or a finite number' });
    }
  }
  if (problems.length > 0) throw new SandboxInputError(subject, problems);

  const out: Record<string, string | number | boolean> = Object.create(null);
  if (Object.hasOwn(data, ATTR_SANDBOX_REQUEST_ID))
    out[ATTR_SANDBOX_REQUEST_ID] = data[ATTR_SANDBOX_REQUEST_ID] as string;
  let kept = 0;
  let dropped = 0;
  let cut = 0;
  for (const key of Object.keys(data)) {
    if (key === ATTR_SANDBOX_REQUEST_ID) continue;
    if (kept === MAX_CALLER_ATTRIBUTES) {
      dropped++;
      continue;
    }
    let value = data[key] as string | number | boolean;
    if (typeof value === 'string' && value.length > MAX_CALLER_VALUE_LENGTH) {
      value = value.slice(0, MAX_CALLER_VALUE_LENGTH);
      cut++;
    }
    out[key] = value;
    kept++;
  }
  if (dropped > 0) {
    reporter.warnOnce(
      'caller-attributes-count',
      () =>
        `${subject}: ${kept + dropped} caller attributes given, at most ${MAX_CALLER_ATTRIBUTES} are carried; ` +
        `the last ${dropped} were dropped (later cases in this process are dropped silently)`,
    );
  }
  if (cut > 0) {
    reporter.warnOnce(
      'caller-attributes-length',
      () =>
        `${subject}: caller attribute values longer than ${MAX_CALLER_VALUE_LENGTH} characters were cut to ` +
        `${MAX_CALLER_VALUE_LENGTH} (later cases in this process are cut silently)`,
    );
  }
  return Object.freeze(out);
}

/**
 * The attributes of one record: the request id (when carried), then `own` (this package's
 * keys, in the order given), then the rest of `carried`. Own keys first, so the SDK's
 * attribute count limit drops caller keys first.
 */
export function recordAttributes(carried: Readonly<SandboxAttributes>, own: Attributes): Attributes {
  const attributes: Attributes = {};
  if (Object.hasOwn(carried, ATTR_SANDBOX_REQUEST_ID))
    attributes[ATTR_SANDBOX_REQUEST_ID] = carried[ATTR_SANDBOX_REQUEST_ID];
  Object.assign(attributes, own);
  for (const key of Object.keys(carried)) if (!Object.hasOwn(attributes, key)) attributes[key] = carried[key];
  return attributes;
}

function snapshot(attributes: unknown, subject: string): OwnRecord {
  let data: unknown;
  try {
    data = ownSnapshot(attributes, 1);
  } catch (error) {
    throw new SandboxInputError(subject, [
      {
        path: '(root)',
        value: attributes,
        rule: `must be readable plain data (reading it threw ${describeError(error)})`,
      },
    ]);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data) || Object.getPrototypeOf(data) !== null) {
    throw new SandboxInputError(subject, [
      { path: '(root)', value: attributes, rule: 'must be a plain object of attributes' },
    ]);
  }
  return data as OwnRecord;
}
