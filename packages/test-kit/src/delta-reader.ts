// A pull reader with delta temporality: each collection holds only what was recorded since the
// one before, so an observable instrument shows up only when its callback ran. That is how a
// test sees an observer stop (a cumulative reader keeps reporting its last values).

import { AggregationTemporality, MetricReader } from '@opentelemetry/sdk-metrics';

/** A MetricReader that collects only when asked, with delta temporality. */
export class DeltaPullMetricReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.DELTA });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}
