// The instrumentation scope and the once-only reporter of this package.

import { createReporter, type InstrumentScope } from '@gym/core/internal';

/** Instrumentation scope of every instrument this package creates. */
export const SCOPE: InstrumentScope = { name: '@gym/observer' };

/** Reports trouble once per kind, through `diag.warn`. */
export const reporter = createReporter('@gym/observer');
