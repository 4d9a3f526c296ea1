// This package's reporter: `@gym/core`'s once-only reporting, one `diag.warn` per kind of
// trouble per process, shared with every copy of the package.

import { createReporter } from '@gym/core';
import { SCOPE_NAME, VERSION } from './version.js';

/** Reports telemetry trouble once per kind, prefixed `@gym/operations:`. */
export const reporter = createReporter(SCOPE_NAME);

/** The instrumentation scope every instrument of this package is created under. */
export const SCOPE = { name: SCOPE_NAME, version: VERSION } as const;
