// The public types. Injection is the first way in: a caller that passes a meter (or a
// provider) is exporting by definition, so tests and hand-built SDKs need no global state.

import type { MeterSourceOptions } from '@gym/core';

/**
 * Where a recorder gets its meter: `meter`, else `meterProvider`'s `@gym/metrics` meter, else
 * the global MeterProvider, and the global one only while metrics are exporting. `null` and
 * `undefined` both mean "not injected".
 */
export type MetricsOptions = MeterSourceOptions;
