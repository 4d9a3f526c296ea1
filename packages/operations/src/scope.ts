// This package's name and version, its reporter (`@gym/core`'s once-only reporting), and the one
// check for a second copy in the process: each copy keeps its own live counts, so the second
// says so once, through `diag`, when it loads.

import { createReporter } from '@gym/core/internal';
import { diag } from '@opentelemetry/api';

/** The scope version; written out (no JSON import at run time), a test keeps it equal to package.json. */
export const VERSION = '0.1.0';
export const SCOPE_NAME = '@gym/operations';

export const reporter = createReporter(SCOPE_NAME);

/** The instrumentation scope every instrument of this package is created under. */
export const SCOPE = { name: SCOPE_NAME, version: VERSION } as const;

const LOADED = Symbol.for('@gym/operations/loaded');
const loaded = globalThis as { [LOADED]?: string };
if (loaded[LOADED] === undefined) {
  loaded[LOADED] = VERSION;
} else {
  diag.warn(
    `${SCOPE_NAME}: a second copy (${VERSION}, first ${loaded[LOADED]}) is loaded in this process; each copy ` +
      'counts only its own operations and metered limits, so their gym.resources.operation.queued/active and ' +
      'gym.concurrency.* points conflict. Deduplicate the install (npm dedupe).',
  );
}
