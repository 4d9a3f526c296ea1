// The instrumentation scope and the one reporter of this package. Every message goes through
// @gym/core's once-only reporting: one `diag.warn` per kind of trouble per process (a sampler
// that fails every few seconds for hours is one problem, not ten thousand lines).

import { createReporter, type InstrumentScope } from '@gym/core/internal';

/** Instrumentation scope name of every record and every lifecycle instrument. */
export const SCOPE_NAME = '@gym/sandbox-telemetry';

/** Instrumentation scope of the tracer and the meter this package resolves. */
export const SCOPE: InstrumentScope = Object.freeze({ name: SCOPE_NAME });

/** Reports trouble once per kind, prefixed `@gym/sandbox-telemetry:`. */
export const reporter = createReporter(SCOPE_NAME);
