// The four gym.resources.operation.* instruments of one meter, and the recorder of one measured
// operation. Instruments are made once per meter; the live queued/active counts are plain
// integers per (operation, executor) that the SDK reads at collection.

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
import { createInstrument, perMeter } from '@gym/core/internal';
import type { Attributes, BatchObservableResult, Histogram, Meter } from '@opentelemetry/api';
import type { Recorder } from './run.js';
import { reporter } from './scope.js';

/** Instruments of one meter and the series they report. */
class OperationMetrics {
  readonly queueDuration: Histogram;
  readonly runDuration: Histogram;
  private readonly series: Series[] = [];
  /** By operation, then executor. */
  private readonly byPair = new Map<Operation, Map<Executor, Series>>();

  constructor(meter: Meter) {
    this.queueDuration = createInstrument(meter, INSTRUMENTS.operationQueueDuration);
    this.runDuration = createInstrument(meter, INSTRUMENTS.operationDuration);
    const queued = createInstrument(meter, INSTRUMENTS.operationQueued);
    const active = createInstrument(meter, INSTRUMENTS.operationActive);
    meter.addBatchObservableCallback(
      (result: BatchObservableResult) => {
        for (const series of this.series) {
          result.observe(queued, series.queued, series.attributes);
          result.observe(active, series.active, series.attributes);
        }
      },
      [queued, active],
    );
  }

  seriesOf(operation: Operation, executor: Executor): Series {
    let byExecutor = this.byPair.get(operation);
    if (byExecutor === undefined) {
      byExecutor = new Map();
      this.byPair.set(operation, byExecutor);
    }
    let series = byExecutor.get(executor);
    if (series === undefined) {
      series = new Series(this, operation, executor);
      byExecutor.set(executor, series);
      this.series.push(series);
    }
    return series;
  }
}

const metricsOf = perMeter((meter) => new OperationMetrics(meter));

let lastMeter: Meter | undefined;
let lastSeries: Series | undefined;

/**
 * The recorder of the (operation, executor) series on `meter`, or `undefined` when its
 * instruments cannot be made (reported once). The last series asked for is kept: a server
 * mostly measures one series after another on one meter.
 */
export function measurement(meter: Meter, operation: Operation, executor: Executor): Recorder | undefined {
  const last = lastSeries;
  if (meter === lastMeter && last !== undefined && last.operation === operation && last.executor === executor) {
    return last;
  }
  try {
    const series = metricsOf(meter).seriesOf(operation, executor);
    lastMeter = meter;
    lastSeries = series;
    return series;
  } catch (error) {
    reporter.warnOnce(
      'instruments',
      'creating the operation instruments failed; this operation is not measured, the next one tries again',
      error,
    );
    return undefined;
  }
}

/**
 * One (operation, executor) series on one meter: its attributes (built once), its live counts,
 * and the recorder of its operations (each operation keeps its own clock readings).
 */
class Series implements Recorder {
  readonly attributes: Attributes;
  readonly byOutcome: Readonly<Record<Outcome, Attributes>>;
  queued = 0;
  active = 0;

  constructor(
    private readonly metrics: OperationMetrics,
    readonly operation: Operation,
    readonly executor: Executor,
  ) {
    const attributes = Object.freeze({ [ATTR_OPERATION]: operation, [ATTR_EXECUTOR]: executor });
    const byOutcome = {} as Record<Outcome, Attributes>;
    for (const outcome of OUTCOMES) byOutcome[outcome] = Object.freeze({ ...attributes, [ATTR_OUTCOME]: outcome });
    this.attributes = attributes;
    this.byOutcome = byOutcome;
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
    this.record(this.metrics.queueDuration, waited, this.attributes);
    return now;
  }

  left(askedAt: number): void {
    this.queued--;
    this.record(this.metrics.queueDuration, performance.now() - askedAt, this.attributes);
  }

  ended(heldAt: number, outcome: Outcome): void {
    this.active--;
    this.record(this.metrics.runDuration, performance.now() - heldAt, this.byOutcome[outcome] as Attributes);
  }

  private record(histogram: Histogram, ms: number, attributes: Attributes): void {
    try {
      histogram.record(ms, attributes);
    } catch (error) {
      reporter.warnOnce(
        'record',
        `recording ${(histogram === this.metrics.runDuration ? INSTRUMENTS.operationDuration : INSTRUMENTS.operationQueueDuration).name} failed; recording goes on`,
        error,
      );
    }
  }
}
