// resourcesOperation, and the gym.resources.operation.* instruments: one recorder per (operation, executor) series.

import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OPERATION_OUTCOME,
  EXECUTORS,
  type Executor,
  INSTRUMENTS,
  isExecutor,
  isOperation,
  OPERATIONS,
  type Operation,
  OUTCOMES,
  type Outcome,
} from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import {
  createInstrument,
  describeValue,
  invalidChoice,
  meterProviderOf,
  resolveMeter,
  sharedSlot,
} from '@gym/core/internal';
import type { Attributes, Histogram, Meter, MeterProvider } from '@opentelemetry/api';
import { enter, gateFor } from './limits.js';
import { MeteredLimitImpl } from './metered-limit.js';
import { type Body, checkSignal, OFF, type Recorder, run, UNRECORDED_OP } from './run.js';
import { now, reporter, SCOPE } from './scope.js';
import type { MeterableLimit, OperationContext, OperationLimit, ResourcesOperationOptions } from './types.js';

// The names last accepted: the entry checks only a new pair. The checks and every measured call are
// apart (`acceptNames`, `measured`), so that the entry stays small enough for V8 to inline.
let lastOperation: unknown = Symbol('none');
let lastExecutor: unknown = lastOperation;

/** Runs `body` in a slot of `limit` (`null`: unlimited) in the caller's async context; measured while metrics export. */
export function resourcesOperation<T>(
  limit: OperationLimit | null,
  options: ResourcesOperationOptions,
  body: (op: OperationContext) => PromiseLike<T> | T,
): Promise<T> {
  try {
    const { operation, executor } = options;
    if (operation !== lastOperation || executor !== lastExecutor) acceptNames(operation, executor);
    if (typeof body !== 'function') {
      throw new TypeError(`resourcesOperation: body must be a function; got ${describeValue(body)}`);
    }
    const signal = checkSignal(options.signal, 'resourcesOperation: options.signal');
    const exporting = isMetricsExporting();
    // Off: nothing records, nothing races the wait; the limiter runs the body itself.
    const plain = typeof limit === 'function' || !(limit instanceof MeteredLimitImpl);
    if (!exporting && signal === undefined && options.meterProvider == null && plain) {
      return enter(limit as MeterableLimit | null, body, UNRECORDED_OP);
    }
    return measured(limit, options, signal, exporting, body);
  } catch (error) {
    return Promise.reject(error);
  }
}

function acceptNames(operation: unknown, executor: unknown): void {
  if (!isOperation(operation)) throw invalidChoice('resourcesOperation: options.operation', operation, OPERATIONS);
  if (!isExecutor(executor)) throw invalidChoice('resourcesOperation: options.executor', executor, EXECUTORS);
  lastOperation = operation;
  lastExecutor = executor;
}

function measured<T>(
  limit: OperationLimit | null,
  options: ResourcesOperationOptions,
  signal: AbortSignal | undefined,
  exporting: boolean,
  body: Body<T>,
): Promise<T> {
  const metered = limit instanceof MeteredLimitImpl ? limit : undefined;
  metered?.exportIfExporting(exporting);
  const gate = metered?.gate ?? (limit === null ? undefined : gateFor(limit));
  if (signal?.aborted) return Promise.reject(signal.reason);
  const provider = meterProviderOf(options, exporting);
  const rec = provider === undefined ? OFF : measurement(provider, options.operation, options.executor);
  return run(gate, metered?.admission, signal, body, rec);
}

class OperationMetrics {
  readonly queueDuration: Histogram;
  readonly runDuration: Histogram;
  readonly series: Series[] = [];

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
    metricsOf.set(meter, this);
  }
}

// Shared by every copy of the package, held weakly: one set of instruments and series per meter.
const metricsOf = sharedSlot('@gym/operations/operation-metrics@1', () => new WeakMap<Meter, OperationMetrics>());
// The same by provider (its meter resolved once), held weakly.
const metricsOfProvider = new WeakMap<MeterProvider, OperationMetrics>();

/** The recorder of the (operation, executor) series on `provider`'s meter, or `OFF` when it cannot be had (reported once). */
function measurement(provider: MeterProvider, operation: Operation, executor: Executor): Recorder {
  try {
    let metrics = metricsOfProvider.get(provider);
    if (metrics === undefined) {
      const meter = resolveMeter({ meterProvider: provider }, SCOPE, reporter);
      if (meter === undefined) return OFF;
      metrics = metricsOf.get(meter) ?? new OperationMetrics(meter);
      metricsOfProvider.set(provider, metrics);
    }
    return (
      metrics.series.find((s) => s.operation === operation && s.executor === executor) ??
      new Series(metrics, operation, executor)
    );
  } catch (error) {
    reporter.warnOnce(
      'instruments',
      'creating the operation instruments failed; this operation is not measured, the next one tries again',
      error,
    );
    return OFF;
  }
}

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
    metrics.series.push(this);
  }

  asked(): number {
    this.queued++;
    return now();
  }

  held(askedAt: number): number {
    const at = now();
    this.left(askedAt, at);
    this.active++;
    return at;
  }

  left(askedAt: number, at = now()): void {
    this.queued--;
    record(this.metrics.queueDuration, at - askedAt, this.attributes, INSTRUMENTS.operationQueueDuration);
  }

  ended(heldAt: number, outcome: Outcome): void {
    this.active--;
    record(this.metrics.runDuration, now() - heldAt, this.byOutcome[outcome], INSTRUMENTS.operationDuration);
  }
}

/** Records `ms` unless a clock reading failed (`NaN`); a failure is reported once. */
function record(histogram: Histogram, ms: number, attributes: Attributes, entry: { readonly name: string }): void {
  if (Number.isNaN(ms)) return;
  try {
    histogram.record(ms, attributes);
  } catch (error) {
    reporter.warnOnce('record', `recording ${entry.name} failed; recording goes on`, error);
  }
}
