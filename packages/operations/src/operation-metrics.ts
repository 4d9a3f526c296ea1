// The four instruments and the live counts, cached per Meter in a WeakMap. Queued and active
// are plain integers that the operation runner increments and decrements; the SDK reads them
// through observable up-down counters at collection time, so the hot path touches no
// instrument for them and a re-initialised process (a new meter) starts from fresh counts.
// Attribute objects are built once per (operation, executor) and per outcome, then reused.

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
import { isMetricsExporting } from '@gym/core';
import {
  type Attributes,
  type BatchObservableResult,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
  type ObservableUpDownCounter,
  ValueType,
} from '@opentelemetry/api';
import { reportOnce } from './report-once.js';
import type { ResourcesOperationOptions } from './types.js';
import { SCOPE_NAME, VERSION } from './version.js';

/** Unit of the two live counts (UCUM annotation: a count of operations). */
const COUNT_UNIT = '{operation}';

/** The live state of one (operation, executor) pair on one meter. */
export interface Series {
  /** `{ operation, executor }`, built once. */
  readonly attributes: Attributes;
  /** `{ operation, executor, outcome }` for each outcome, built once. */
  readonly byOutcome: Readonly<Record<Outcome, Attributes>>;
  /** Operations waiting for their limit now. */
  queued: number;
  /** Operations running inside their limit now. */
  active: number;
}

/** Instruments and live counts of one meter. */
export class OperationMetrics {
  private readonly queueDuration: Histogram;
  private readonly runDuration: Histogram;
  private readonly queued: ObservableUpDownCounter;
  private readonly active: ObservableUpDownCounter;
  private readonly rows: Partial<Record<Operation, Partial<Record<Executor, Series>>>> = {};
  /** Every series used so far, in first-use order: the ones the observable counters report. */
  private readonly used: Series[] = [];

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
      series = newSeries(operation, executor);
      row[executor] = series;
      this.used.push(series);
    }
    return series;
  }

  /** Records one queue wait. Never throws. */
  recordQueue(series: Series, ms: number): void {
    try {
      this.queueDuration.record(nonNegative(ms), series.attributes);
    } catch (error) {
      reportOnce('record', `recording ${METRIC_OPERATION_QUEUE_DURATION} failed`, error);
    }
  }

  /** Records one run and its outcome. Never throws. */
  recordRun(series: Series, outcome: Outcome, ms: number): void {
    try {
      this.runDuration.record(nonNegative(ms), series.byOutcome[outcome]);
    } catch (error) {
      reportOnce('record', `recording ${METRIC_OPERATION_DURATION} failed`, error);
    }
  }

  private readonly observe = (result: BatchObservableResult): void => {
    for (const series of this.used) {
      result.observe(this.queued, series.queued, series.attributes);
      result.observe(this.active, series.active, series.attributes);
    }
  };
}

/** A clock that went backwards (or an injected one that returned NaN) records 0, never a dropped point. */
function nonNegative(ms: number): number {
  if (ms > 0) return ms;
  return 0;
}

function newSeries(operation: Operation, executor: Executor): Series {
  const attributes = Object.freeze({ [ATTR_OPERATION]: operation, [ATTR_EXECUTOR]: executor });
  const byOutcome = {} as Record<Outcome, Attributes>;
  for (const outcome of OUTCOMES) {
    byOutcome[outcome] = Object.freeze({ ...attributes, [ATTR_OUTCOME]: outcome });
  }
  return { attributes, byOutcome: Object.freeze(byOutcome), queued: 0, active: 0 };
}

/** `null` marks a meter or provider that failed once: it is not asked again. */
const byMeter = new WeakMap<Meter, OperationMetrics | null>();
const byProvider = new WeakMap<MeterProvider, OperationMetrics | null>();

/** The instruments of `meter`, created on first use; `undefined` if creating them failed. */
export function metricsForMeter(meter: Meter): OperationMetrics | undefined {
  let found = byMeter.get(meter);
  if (found === undefined) {
    try {
      found = new OperationMetrics(meter);
    } catch (error) {
      reportOnce('create', 'creating the operation instruments failed; this meter records nothing', error);
      found = null;
    }
    byMeter.set(meter, found);
  }
  return found ?? undefined;
}

/** The instruments of this package's meter on `provider`; `undefined` if getting it failed. */
export function metricsForProvider(provider: MeterProvider): OperationMetrics | undefined {
  let found = byProvider.get(provider);
  if (found === undefined) {
    try {
      found = metricsForMeter(provider.getMeter(SCOPE_NAME, VERSION)) ?? null;
    } catch (error) {
      reportOnce('meter', 'getting a meter from the meter provider failed; it records nothing', error);
      found = null;
    }
    byProvider.set(provider, found);
  }
  return found ?? undefined;
}

/**
 * Where an operation records, decided once at its entry: the injected meter, else a meter of
 * the injected provider, else — only when metrics are exporting — a meter of the global
 * provider. `undefined` means off: the caller then reads no clock and touches no count.
 */
export function metricsFor(options: ResourcesOperationOptions): OperationMetrics | undefined {
  const meter = options.meter;
  if (meter != null) return metricsForMeter(meter);
  const provider = options.meterProvider;
  if (provider != null) return metricsForProvider(provider);
  if (!isMetricsExporting()) return undefined;
  try {
    return metricsForProvider(metrics.getMeterProvider());
  } catch (error) {
    reportOnce('global', 'reading the global meter provider failed', error);
    return undefined;
  }
}
