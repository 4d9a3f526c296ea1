// The four gym.resources.operation.* instruments of one meter, and the recorder of one
// (operation, executor) series, whose live queued/active counts the SDK reads at collection.

import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OPERATION_OUTCOME,
  type Executor,
  INSTRUMENTS,
  type Operation,
  OUTCOMES,
  type Outcome,
} from '@gym/constants';
import { createInstrument, perMeter, resolveMeter } from '@gym/core/internal';
import type { Attributes, Histogram, Meter, MeterProvider } from '@opentelemetry/api';
import { OFF, type Recorder } from './run.js';
import { now, reporter, SCOPE, warnIfSecondCopy } from './scope.js';

class OperationMetrics {
  readonly queueDuration: Histogram;
  readonly runDuration: Histogram;
  /** At most one per (operation, executor): a few dozen. */
  private readonly series: Series[] = [];

  constructor(meter: Meter) {
    warnIfSecondCopy();
    this.queueDuration = createInstrument(meter, INSTRUMENTS.operationQueueDuration);
    this.runDuration = createInstrument(meter, INSTRUMENTS.operationDuration);
    const queued = createInstrument(meter, INSTRUMENTS.operationQueued);
    const active = createInstrument(meter, INSTRUMENTS.operationActive);
    meter.addBatchObservableCallback(
      (result) => {
        for (const series of this.series) {
          result.observe(queued, series.queued, series.attributes);
          result.observe(active, series.active, series.attributes);
        }
      },
      [queued, active],
    );
  }

  /** Asked only when the call differs from the last measured one (`lastOrFind`). */
  seriesOf(operation: Operation, executor: Executor): Series {
    let series = this.series.find((s) => s.operation === operation && s.executor === executor);
    if (series === undefined) {
      series = new Series(this, operation, executor);
      this.series.push(series);
    }
    return series;
  }
}

// Per meter, held weakly: a meter nobody uses any more is not kept alive by this package.
const metricsOf = perMeter((meter) => new OperationMetrics(meter));
// The same per provider, held weakly: a call looks up its provider once (not provider → meter →
// metrics). A provider's meter comes from core's resolution, so one meter still gets one set.
const metricsOfProvider = new WeakMap<MeterProvider, OperationMetrics>();

/** The recorder of the (operation, executor) series on `provider`'s meter, or `OFF` when it cannot be had (reported once). */
export function measurement(provider: MeterProvider, operation: Operation, executor: Executor): Recorder {
  try {
    let metrics = metricsOfProvider.get(provider);
    if (metrics === undefined) {
      const meter = resolveMeter({ meterProvider: provider }, SCOPE, reporter);
      if (meter === undefined) return OFF;
      metrics = metricsOf(meter);
      metricsOfProvider.set(provider, metrics);
    }
    return metrics.seriesOf(operation, executor);
  } catch (error) {
    reporter.warnOnce(
      'instruments',
      'creating the operation instruments failed; this operation is not measured, the next one tries again',
      error,
    );
    return OFF;
  }
}

/** One series: its attributes (built once), its live counts, and the recorder of its operations. */
class Series implements Recorder {
  readonly attributes: Attributes;
  readonly byOutcome = {} as Record<Outcome, Attributes>;
  queued = 0;
  active = 0;

  constructor(
    private readonly metrics: OperationMetrics,
    readonly operation: Operation,
    readonly executor: Executor,
  ) {
    this.attributes = Object.freeze({ [ATTR_OPERATION]: operation, [ATTR_EXECUTOR]: executor });
    for (const outcome of OUTCOMES) {
      this.byOutcome[outcome] = Object.freeze({ ...this.attributes, [ATTR_OPERATION_OUTCOME]: outcome });
    }
  }

  asked(): number {
    this.queued++;
    return now();
  }

  held(askedAt: number): number {
    const at = now();
    this.queued--;
    this.active++;
    record(this.metrics.queueDuration, at - askedAt, this.attributes, INSTRUMENTS.operationQueueDuration);
    return at;
  }

  left(askedAt: number): void {
    this.queued--;
    record(this.metrics.queueDuration, now() - askedAt, this.attributes, INSTRUMENTS.operationQueueDuration);
  }

  ended(heldAt: number, outcome: Outcome): void {
    this.active--;
    record(this.metrics.runDuration, now() - heldAt, this.byOutcome[outcome], INSTRUMENTS.operationDuration);
  }
}

/** Records `ms` unless a clock reading behind it failed (`NaN`); a failure is reported once. */
function record(histogram: Histogram, ms: number, attributes: Attributes, entry: { readonly name: string }): void {
  if (Number.isNaN(ms)) return;
  try {
    histogram.record(ms, attributes);
  } catch (error) {
    reporter.warnOnce('record', `recording ${entry.name} failed; recording goes on`, error);
  }
}
