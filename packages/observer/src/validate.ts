// Programming errors in arguments throw at once, naming the value and what is allowed.
// Everything else (a failing meter, clock or /proc) is telemetry trouble: reported once, never thrown.

import { SERVER_NAME_PATTERN } from '@gym/constants';
import { invalidChoice } from '@gym/core';

/** Largest delay a Node timer honours (2^31 − 1 ms); beyond it Node fires after 1 ms. */
export const MAX_LAG_INTERVAL_MS = 2 ** 31 - 1;
/** Default of `lagIntervalMs`. */
export const DEFAULT_LAG_INTERVAL_MS = 100;

const SERVER_NAME_ALLOWED = `a string matching ${SERVER_NAME_PATTERN} (1 to 128 of A-Z a-z 0-9 _ . -)`;

/** The server name, validated, or `undefined` when absent. */
export function serverNameOf(what: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !SERVER_NAME_PATTERN.test(value))
    throw invalidChoice(what, value, SERVER_NAME_ALLOWED);
  return value;
}

/** The lag interval, validated, or the default when absent. */
export function lagIntervalOf(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_LAG_INTERVAL_MS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1 || value > MAX_LAG_INTERVAL_MS) {
    throw invalidChoice(
      'startObserver: options.lagIntervalMs',
      value,
      `a finite number of milliseconds from 1 to ${MAX_LAG_INTERVAL_MS}`,
    );
  }
  return value;
}

/** The options object, or an empty one when absent; anything else is a programming error. */
export function optionsOf<T extends object>(what: string, value: unknown): Partial<T> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object') throw invalidChoice(what, value, 'an options object or undefined');
  return value as Partial<T>;
}

/** An injected meter or provider: an object, or absent (`undefined` / `null`). */
export function injectedOf<T>(what: string, value: T | null | undefined): T | null | undefined {
  if (value === undefined || value === null || typeof value === 'object' || typeof value === 'function') return value;
  throw invalidChoice(what, value, 'an object or undefined');
}

/**
 * An own property of `options`, else `undefined`: a polluted `Object.prototype` must not inject
 * a meter or change an interval. May throw through a throwing getter: callers catch.
 */
export function own<T extends object, K extends keyof T>(options: Partial<T>, key: K): T[K] | undefined {
  return Object.hasOwn(options, key) ? options[key] : undefined;
}
