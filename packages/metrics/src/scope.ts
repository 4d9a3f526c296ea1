// The one reporter and the instrumentation scope of this package. Every message goes through
// @gym/core's once-only reporting (one `diag.warn` per kind per process, shared by every copy
// of the package, and it survives a logger that throws).

import { createReporter, type InstrumentScope } from '@gym/core/internal';

/** Instrumentation scope of every instrument this package creates on a meter it resolves. */
export const SCOPE: InstrumentScope = Object.freeze({ name: '@gym/metrics' });

/** Reports trouble once per kind, prefixed `@gym/metrics:`. */
export const reporter = createReporter(SCOPE.name);
