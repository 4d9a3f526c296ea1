// The instrumentation scope, the once-only reporter and the empty attribute set of this package.
import { createReporter, type InstrumentScope } from '@gym/core/internal';
import type { Attributes } from '@opentelemetry/api';

export const SCOPE: InstrumentScope = { name: '@gym/observer' };
export const reporter = createReporter('@gym/observer');
export const NO_ATTRIBUTES: Attributes = Object.freeze({});
