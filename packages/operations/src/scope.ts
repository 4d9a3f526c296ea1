// This package's scope, its reporter, and the check for a second copy in the process: each copy
// keeps its own live counts, so the second says so once, through `diag`, when it loads.

import { createReporter } from '@gym/core/internal';
import { diag } from '@opentelemetry/api';

/** Every instrument's scope; the version is written out (no JSON import), a test keeps it equal to package.json. */
export const SCOPE = { name: '@gym/operations', version: '0.1.0' } as const;

export const reporter = createReporter(SCOPE.name);

const LOADED = Symbol.for('@gym/operations/loaded');
const loaded = globalThis as { [LOADED]?: string };
if (loaded[LOADED] === undefined) {
  loaded[LOADED] = SCOPE.version;
} else {
  diag.warn(
    `${SCOPE.name}: a second copy (${SCOPE.version}, first ${loaded[LOADED]}) is loaded in this process; each copy ` +
      'counts only its own operations and metered limits, so their gym.resources.operation.queued/active and ' +
      'gym.concurrency.* points conflict. Deduplicate the install (npm dedupe).',
  );
}
