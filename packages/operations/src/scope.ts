import { createReporter } from '@gym/core/internal';

export const SCOPE = { name: '@gym/operations', version: '1.0.0' } as const;

export const reporter = createReporter(SCOPE.name);

/** The clock, or `NaN` when reading it throws (reported once): the counts move all the same. */
export function now(): number {
  try {
    return performance.now();
  } catch (error) {
    reporter.warnOnce('clock', 'reading performance.now() failed; that time is not recorded', error);
    return Number.NaN;
  }
}
