// The public option type. Injection is the first way in: a caller that passes a provider is
// exporting by definition, so tests and hand-built SDKs need no global state.

import type { MeterProvider } from '@opentelemetry/api';

/** Where a {@link GymMetrics} records. */
export interface MetricsOptions {
  /**
   * Record on this provider's `@gym/metrics` meter. Absent or `null`: the global MeterProvider,
   * and only while metrics are exporting.
   */
  readonly meterProvider?: MeterProvider | null | undefined;
}
