// The four gym.resources.operation.* instruments of one meter, and the live queued/active
// counts they report. Instruments are made once per Meter (a WeakMap), so a re-initialised
// process (a new meter) gets fresh instruments and fresh counts.
//
// The counts are plain integers that the operations move; the SDK reads them through
// observable up-down counters at collection, so the hot path touches no instrument for them.
// They live in @gym/core's versioned global, keyed by meter and (operation, executor), not in
// this module: an install that did not deduplicate this package loads it twice, and two
// copies each counting half of the operations would export two wrong halves (the SDK keeps
// the last observation of an attribute set). Here every copy moves and reports the same
// integers, so whichever copy's observation the SDK keeps, it is the whole count.

import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OUTCOME,
  type Executor,
  METRIC_OPERATION_ACTIVE,
  METRIC_OPERATION_DURATION,
  METRIC_OPERATION_QUEUE_DURATION,
  METRIC_OPERATION_QUEUED,
  OPERATION_BOUNDARIES_MS,
  type Operation,
  OUTCOMES,
  type Outcome,
} from '@gym/constants';
import { perMeter, sharedSlot } from '@gym/core';
import {
  type Attributes,
  type BatchObservableResult,
  type Histogram,
  type Meter,
  type ObservableUpDownCounter,
  ValueType,
} from '@opentelemetry/api';
import { reporter } from './report.js';

/** Unit of the two live counts (UCUM annotation: a count of operations). */
const COUNT_UNIT = '{operation}';

/**
 * The live state of one (operation, executor) pair on one meter. Shared by every copy of this
 * package (version 1 of the shape: only ever extended).
 */
export interface Series {
  /** `{ operation, executor }`, frozen. */
  readonly attributes: Attributes;
  /** `{ operation, executor, outcome }` for each outcome, frozen. */
  readonly byOutcome: Readonly<Record<Outcome, Attributes>>;
  /** Operations waiting for their limit now. */
  queued: number;
  /** Operations running inside their limit now. */
  active: number;
}

/** Every series of every meter, in first-use order per meter. Process-wide. */
const liveSeries = sharedSlot('@gym/operations/live-series@1', () => new WeakMap<Meter, Map<string, Series>>());

function seriesOf(meter: Meter): Map<string, Series> {
  let map = liveSeries.get(meter);
  if (map === undefined) {
    map = new Map();
    liveSeries.set(meter, map);
  }
  return map;
}

/** Instruments of one meter (made by this copy), reporting the meter's shared live counts. */
export class OperationMetrics {
  private readonly queueDuration: Histogram;
  private readonly runDuration: Histogram;
  private readonly queued: ObservableUpDownCounter;
  private readonly active: ObservableUpDownCounter;
  private readonly shared: Map<string, Series>;
  /** This copy's look-up of the shared series, by operation then executor (no string key on the hot path). */
  private readonly rows: Partial<Record<Operation, Partial<Record<Executor, Series>>>> = {};

  constructor(meter: Meter) {
    const advice = { explicitBucketBoundaries: [...OPERATION_BOUNDARIES_MS] };
    this.queueDuration = meter.createHistogram(METRIC_OPERATION_QUEUE_DURATION, {
      description: 'Time from asking a limit to holding it.',
      unit: 'ms',
      advice,
    });
    this.runDuration = meter.createHistogram(METRIC_OPERATION_DURATION, {
      description: 'Time running inside a limit, by outcome.',
      unit: 'ms',
      advice,
    });
    this.queued = meter.createObservableUpDownCounter(METRIC_OPERATION_QUEUED, {
      description: 'Operations waiting for their limit now.',
      unit: COUNT_UNIT,
      valueType: ValueType.INT,
    });
    this.active = meter.createObservableUpDownCounter(METRIC_OPERATION_ACTIVE, {
      description: 'Operations running inside their limit now.',
      unit: COUNT_UNIT,
      valueType: ValueType.INT,
    });
    this.shared = seriesOf(meter);
    meter.addBatchObservableCallback(this.observe, [this.queued, this.active]);
  }

  /** The series of `(operation, executor)`, created on first use. Both must already be validated. */
  series(operation: Operation, executor: Executor): Series {
    let row = this.rows[operation];
    if (row === undefined) {
      row = {};
      this.rows[operation] = row;
    }
    let series = row[executor];
    if (series === undefined) {
      const key = `${operation}\u0000${executor}`;
      series = this.shared.get(key);
      if (series === undefined) {
        series = newSeries(operation, executor);
        this.shared.set(key, series);
      }
      row[executor] = series;
    }
    return series;
  }

  /** Records one queue wait. Never throws. */
  recordQueue(series: Series, ms: number): void {
    try {
      this.queueDuration.record(nonNegative(ms), series.attributes);
    } catch (error) {
      reporter.warnOnce('record', `recording ${METRIC_OPERATION_QUEUE_DURATION} failed; recording goes on`, error);
    }
  }

  /** Records one run with its outcome. Never throws; never records a point without its attributes. */
  recordRun(series: Series, outcome: Outcome, ms: number): void {
    const attributes = series.byOutcome[outcome];
    if (attributes === undefined) return;
    try {
      this.runDuration.record(nonNegative(ms), attributes);
    } catch (error) {
      reporter.warnOnce('record', `recording ${METRIC_OPERATION_DURATION} failed; recording goes on`, error);
    }
  }

  private readonly observe = (result: BatchObservableResult): void => {
    for (const series of this.shared.values()) {
      result.observe(this.queued, series.queued, series.attributes);
      result.observe(this.active, series.active, series.attributes);
    }
  };
}

/**
 * A duration to record: a clock that went backwards, or one that failed (NaN), records 0. The
 * point is kept, because the duration histogram's count is the only per-outcome count there is:
 * dropping it would hide the outcome.
 */
function nonNegative(ms: number): number {
  // biome-ignore lint/complexity/useMathMinMax: NaN must become 0; Math.max(NaN, 0) is NaN
  return ms > 0 ? ms : 0;
}

function newSeries(operation: Operation, executor: Executor): Series {
  const attributes = Object.freeze({ [ATTR_OPERATION]: operation, [ATTR_EXECUTOR]: executor });
  const byOutcome = {} as Record<Outcome, Attributes>;
  for (const outcome of OUTCOMES) {
    byOutcome[outcome] = Object.freeze({ ...attributes, [ATTR_OUTCOME]: outcome });
  }
  return { attributes, byOutcome: Object.freeze(byOutcome), queued: 0, active: 0 };
}

const metricsOf = perMeter((meter) => new OperationMetrics(meter));

/**
 * The instruments of `meter`, made on first use; `undefined` when making them failed (reported
 * once, and tried again on the next operation: a meter is never written off).
 */
export function operationMetricsFor(meter: Meter): OperationMetrics | undefined {
  try {
    return metricsOf(meter);
  } catch (error) {
    reporter.warnOnce(
      'instruments',
      'creating the operation instruments failed; this operation is not measured, the next one tries again',
      error,
    );
    return undefined;
  }
}
