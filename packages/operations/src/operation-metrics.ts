// The four gym.resources.operation.* instruments of one meter, and the recorder of one
// (operation, executor) series, whose live queued/active counts the SDK reads at collection.

import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OUTCOME,
  type Executor,
  INSTRUMENTS,
  type Operation,
  OUTCOMES,
  type Outcome,
} from '@gym/constants';
import { createInstrument, perMeter, resolveMeter } from '@gym/core/internal';
import type { Attributes, Histogram, Meter, MeterProvider } from '@opentelemetry/api';
import type { Recorder } from './run.js';
import { reporter, SCOPE } from './scope.js';

class OperationMetrics {
  readonly queueDuration: Histogram;
  readonly runDuration: Histogram;
  /** At most one per (operation, executor): a few dozen. */
  private readonly series: Series[] = [];
  /** The series asked for last: a server mostly measures one series after another. */
  private last: Series | undefined;

  constructor(meter: Meter) {
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

  seriesOf(operation: Operation, executor: Executor): Series {
    const last = this.last;
    if (last !== undefined && last.operation === operation && last.executor === executor) return last;
    let series = this.series.find((s) => s.operation === operation && s.executor === executor);
    if (series === undefined) {
      series = new Series(this, operation, executor);
      this.series.push(series);
    }
    this.last = series;
    return series;
  }
}

// Per meter, held weakly: a meter nobody uses any more is not kept alive by this package.
const metricsOf = perMeter((meter) => new OperationMetrics(meter));
// The same per provider, held weakly: a call looks up its provider once (not provider → meter →
// metrics). A provider's meter comes from core's resolution, so one meter still gets one set.
const metricsOfProvider = new WeakMap<MeterProvider, OperationMetrics>();

/** The recorder of the (operation, executor) series on `provider`'s meter, or `undefined` when it cannot be had (reported once). */
export function measurement(provider: MeterProvider, operation: Operation, executor: Executor): Recorder | undefined {
  try {
    let metrics = metricsOfProvider.get(provider);
    if (metrics === undefined) {
      const meter = resolveMeter({ meterProvider: provider }, SCOPE, reporter);
      if (meter === undefined) return undefined;
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
    return undefined;
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
      this.byOutcome[outcome] = Object.freeze({ ...this.attributes, [ATTR_OUTCOME]: outcome });
    }
  }

  asked(): number {
    this.queued++;
    return performance.now();
  }

  /** Unlimited work is held without asking (`askedAt` NaN): a queue wait of 0. */
  held(askedAt: number): number {
    const now = performance.now();
    this.active++;
    let waited = 0;
    if (!Number.isNaN(askedAt)) {
      this.queued--;
      waited = now - askedAt;
    }
    try {
      this.metrics.queueDuration.record(waited, this.attributes);
    } catch (error) {
      recordFailed(INSTRUMENTS.operationQueueDuration, error);
    }
    return now;
  }

  left(askedAt: number): void {
    this.queued--;
    try {
      this.metrics.queueDuration.record(performance.now() - askedAt, this.attributes);
    } catch (error) {
      recordFailed(INSTRUMENTS.operationQueueDuration, error);
    }
  }

  ended(heldAt: number, outcome: Outcome): void {
    this.active--;
    try {
      this.metrics.runDuration.record(performance.now() - heldAt, this.byOutcome[outcome]);
    } catch (error) {
      recordFailed(INSTRUMENTS.operationDuration, error);
    }
  }
}

function recordFailed(entry: { readonly name: string }, error: unknown): void {
  reporter.warnOnce('record', `recording ${entry.name} failed; recording goes on`, error);
}
