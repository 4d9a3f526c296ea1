// resourcesOperation: check the arguments, choose the recorder once (OFF when nothing
// exports), and take the one run path.

import { EXECUTORS, isExecutor, isOperation, OPERATIONS } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { describeValue, invalidChoice, resolveMeter } from '@gym/core/internal';
import { cachedGate, type Gate, LIMIT_SHAPES } from './limits.js';
import { MeteredLimitImpl } from './metered-limit.js';
import { measurement } from './operation-metrics.js';
import { type Body, checkSignal, OFF, type Recorder, run, UNRECORDED_OP } from './run.js';
import { reporter, SCOPE } from './scope.js';
import type { OperationContext, OperationLimit, ResourcesOperationOptions } from './types.js';

// The last operation and executor accepted: a server passes the same few again and again, and
// the sets never change, so only a new value is looked up.
let lastOperation: unknown = Symbol('none');
let lastExecutor: unknown = lastOperation;

/**
 * Runs `body` inside `limit` and returns (or rethrows, unchanged) what the body returns (throws).
 * The limit's own queue decides who runs when; the body runs in the caller's async context.
 *
 * While metrics are exporting (or a `meterProvider` is given) it records the queue time, the run
 * time with the outcome, and the live queued/active counts; otherwise it only enters and leaves
 * the limit. If `signal` aborts while the operation waits, it rejects at once with
 * `signal.reason` and never runs the body. Programming errors reject before the limit is touched
 * (`RangeError` for an operation or executor outside its set, `TypeError` for a wrong limit, body
 * or signal); telemetry failures never reach the caller.
 *
 * @param limit any `MeterableLimit`, a metered limit, or `null` for unlimited work.
 */
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
    if (limit instanceof MeteredLimitImpl) return metered(limit, options, signal, body);
    const gate = limit === null ? undefined : gateOfLimit(limit);
    // The off path: nothing records, nothing races the wait.
    if (signal === undefined && options.meterProvider == null && !isMetricsExporting()) {
      return gate === undefined ? run(undefined, undefined, undefined, body, OFF) : gate.inside(body, UNRECORDED_OP);
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    return run(
      gate,
      undefined,
      signal,
      body,
      recorderOf(options, options.meterProvider != null || isMetricsExporting()),
    );
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

function gateOfLimit(limit: object): Gate {
  const gate = typeof limit === 'object' || typeof limit === 'function' ? cachedGate(limit) : undefined;
  if (gate !== undefined) return gate;
  throw new TypeError(
    `resourcesOperation: limit must be ${LIMIT_SHAPES}, a metered limit, or null for unlimited work; got ${describeValue(limit)}`,
  );
}

function metered<T>(
  limit: MeteredLimitImpl,
  options: ResourcesOperationOptions,
  signal: AbortSignal | undefined,
  body: Body<T>,
): Promise<T> {
  const exporting = isMetricsExporting();
  limit.exportIfExporting(exporting);
  if (signal?.aborted) return Promise.reject(signal.reason);
  return run(
    limit.gate,
    limit.admission,
    signal,
    body,
    recorderOf(options, options.meterProvider != null || exporting),
  );
}

/** The recorder chosen at entry: the series' own when measured, else OFF. */
function recorderOf(options: ResourcesOperationOptions, measured: boolean): Recorder {
  if (!measured) return OFF;
  const meter = resolveMeter(options, SCOPE, reporter);
  return (meter && measurement(meter, options.operation, options.executor)) ?? OFF;
}
