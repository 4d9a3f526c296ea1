// This package's scope, its reporter, and the check for a second copy in the process: each copy
// keeps its own live counts, so the second says so once, through `diag`, when it starts to export
// (not when it loads: static imports load before the application has set its `diag` logger).

import { createReporter } from '@gym/core/internal';

/** Every instrument's scope; the version is written out (no JSON import), a test keeps it equal to package.json. */
export const SCOPE = { name: '@gym/operations', version: '0.1.0' } as const;

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

const LOADED = Symbol.for('@gym/operations/loaded');
const loaded = globalThis as { [LOADED]?: string };
/** The version of the copy loaded first, when this copy is not it. */
const first = loaded[LOADED];
loaded[LOADED] ??= SCOPE.version;

/** Called when this copy makes instruments on a meter: a second copy says so, once. */
export function warnIfSecondCopy(): void {
  if (first === undefined) return;
  reporter.warnOnce(
    'second-copy',
    `a second copy (${SCOPE.version}, first ${first}) is loaded in this process; each copy counts only its own ` +
      'operations and metered limits, so their gym.resources.operation.queued/active and gym.concurrency.* points ' +
      'conflict. Deduplicate the install (npm dedupe).',
  );
}
