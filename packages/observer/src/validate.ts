// The two option values the types cannot bound: the server name (an attribute value, so it
// must match SERVER_NAME_PATTERN) and the lag interval (a Node timer). A bad one is a
// programming error and throws at once, naming the value and what is allowed.

import { SERVER_NAME_PATTERN } from '@gym/constants';
import { invalidChoice, MAX_TIMER_SECONDS } from '@gym/core/internal';

/** Default of `lagIntervalMs`. */
export const DEFAULT_LAG_INTERVAL_MS = 100;
/** Longest `lagIntervalMs`: the longest delay a Node timer honours. */
const MAX_LAG_INTERVAL_MS = MAX_TIMER_SECONDS * 1000;

const SERVER_NAME_ALLOWED = `a string matching ${SERVER_NAME_PATTERN} (1 to 128 of A-Z a-z 0-9 _ . -)`;

/** The server name, validated, or `undefined` when absent. */
export function serverNameOf(what: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !SERVER_NAME_PATTERN.test(value)) {
    throw invalidChoice(what, value, SERVER_NAME_ALLOWED);
  }
  return value;
}

/** The lag interval, validated, or the default when absent. */
export function lagIntervalOf(value: number | undefined): number {
  if (value === undefined) return DEFAULT_LAG_INTERVAL_MS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1 || value > MAX_LAG_INTERVAL_MS) {
    throw invalidChoice(
      'startObserver: options.lagIntervalMs',
      value,
      `a finite number of milliseconds from 1 to ${MAX_LAG_INTERVAL_MS}`,
    );
  }
  return value;
}
