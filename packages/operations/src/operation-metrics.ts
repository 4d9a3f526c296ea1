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

/** The live state of one (operation, executor) pair on one meter. */
interface Series {
  readonly attributes: Attributes;
  readonly byOutcome: Readonly<Record<Outcome, Attributes>>;
  queued: number;
  active: number;
}

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
      const attributes = Object.freeze({ [ATTR_OPERATION]: operation, [ATTR_EXECUTOR]: executor });
      const byOutcome = {} as Record<Outcome, Attributes>;
      for (const outcome of OUTCOMES) byOutcome[outcome] = Object.freeze({ ...attributes, [ATTR_OUTCOME]: outcome });
      series = { attributes, byOutcome, queued: 0, active: 0 };
      byExecutor.set(executor, series);
      this.series.push(series);
    }
    return series;
  }
}

const metricsOf = perMeter((meter) => new OperationMetrics(meter));

/** The recorder of one operation on `meter`, or `undefined` when its instruments cannot be made (reported once). */
export function measurement(meter: Meter, operation: Operation, executor: Executor): Recorder | undefined {
  try {
    const metrics = metricsOf(meter);
    return new Measurement(metrics, metrics.seriesOf(operation, executor));
  } catch (error) {
    reporter.warnOnce(
      'instruments',
      'creating the operation instruments failed; this operation is not measured, the next one tries again',
      error,
    );
    return undefined;
  }
}

/** One measured operation: its clock readings and its moves between the live counts. */
class Measurement implements Recorder {
  private askedAt = Number.NaN;
  private heldAt = 0;
  private waiting = false;

  constructor(
    private readonly metrics: OperationMetrics,
    private readonly series: Series,
  ) {}

  asked(): void {
    this.waiting = true;
    this.series.queued++;
    this.askedAt = this.read();
  }

  /** Unlimited work is held without asking: a queue wait of 0. */
  held(): void {
    const now = this.read();
    this.heldAt = now;
    this.series.active++;
    let waited = 0;
    if (this.waiting) {
      this.waiting = false;
      this.series.queued--;
      waited = now - this.askedAt;
    }
    this.record(this.metrics.queueDuration, waited, this.series.attributes);
  }

  left(): void {
    this.waiting = false;
    this.series.queued--;
    this.record(this.metrics.queueDuration, this.read() - this.askedAt, this.series.attributes);
  }

  ended(outcome: Outcome): void {
    this.series.active--;
    this.record(this.metrics.runDuration, this.read() - this.heldAt, this.series.byOutcome[outcome] as Attributes);
  }

  /** The monotonic clock. */
  private read(): number {
    return performance.now();
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
