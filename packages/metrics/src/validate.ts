// Input checks for the recorders. Every argument here is a measurement, and a bad
// measurement is dropped (never clamped: a clamped duration would be a lie in a dashboard),
// never thrown: the recorders sit in a server's hot path. Each kind of mistake is reported
// once per recorder and field, naming the value and what is allowed.

import { describeValue } from '@gym/core/internal';
import { reporter } from './scope.js';

/** What was wrong with a value, one warning each. */
type Mistake = 'not a number' | 'NaN' | 'infinite' | 'negative' | 'not an integer';

/** True for a finite number >= 0. NaN fails the comparison; one branch on the hot path. */
export function isValidDuration(ms: unknown): ms is number {
  return typeof ms === 'number' && ms >= 0 && ms !== Number.POSITIVE_INFINITY;
}

/** True for an integer >= 0 (a finite one: `Number.isInteger` rejects NaN and infinities). */
export function isValidCount(count: unknown): count is number {
  return Number.isInteger(count) && (count as number) >= 0;
}

/** Warns (once per recorder, field and kind of mistake) that a duration was dropped. */
export function reportInvalidDuration(recorder: string, field: string, value: unknown, dropped: string): void {
  const mistake = classify(value, false);
  reporter.warnOnce(`${recorder}.${field}:${mistake}`, () =>
    message(recorder, field, value, mistake, 'a finite number of milliseconds >= 0', dropped),
  );
}

/** Warns (once per recorder, field and kind of mistake) that a count was dropped. */
export function reportInvalidCount(recorder: string, field: string, value: unknown): void {
  const mistake = classify(value, true);
  reporter.warnOnce(`${recorder}.${field}:${mistake}`, () =>
    message(recorder, field, value, mistake, 'an integer >= 0', 'the call was dropped (nothing recorded)'),
  );
}

/** Warns (once per recorder and field) that a flag was not a boolean. */
export function reportInvalidFlag(recorder: string, field: string, value: unknown): void {
  reporter.warnOnce(`${recorder}.${field}:not a boolean`, () =>
    message(recorder, field, value, 'not a boolean', 'true or false', 'the call was dropped (nothing recorded)'),
  );
}

function classify(value: unknown, integer: boolean): Mistake {
  if (typeof value !== 'number') return 'not a number';
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return 'infinite';
  if (value < 0) return 'negative';
  if (integer && !Number.isInteger(value)) return 'not an integer';
  // Unreachable for values the validators rejected; named rather than thrown.
  return 'not a number';
}

function message(
  recorder: string,
  field: string,
  value: unknown,
  mistake: string,
  allowed: string,
  dropped: string,
): string {
  return (
    `${recorder}: ${field} = ${describeValue(value)} is ${mistake}; allowed: ${allowed}. ` +
    `${dropped[0]!.toUpperCase()}${dropped.slice(1)}; later ${mistake} values of ${field} are dropped silently.`
  );
}
