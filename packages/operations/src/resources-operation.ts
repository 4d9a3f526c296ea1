// resourcesOperation: check the arguments, choose the recorder once (OFF when nothing
// exports), and take the one run path.

import { EXECUTORS, type Executor, isExecutor, isOperation, OPERATIONS, type Operation } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { describeValue, invalidChoice, resolveMeter } from '@gym/core/internal';
import { cachedGate, type Gate, LIMIT_SHAPES } from './limits.js';
import { meteredParts } from './metered-limit.js';
import { measurement } from './operation-metrics.js';
import { type Admission, checkSignal, OFF, type Recorder, run } from './run.js';
import { reporter, SCOPE } from './scope.js';
import type { OperationContext, OperationLimit, ResourcesOperationOptions } from './types.js';

// The last operation and executor accepted (a server passes the same few again and again):
// known good, so only a new value is looked up.
let lastOperation: unknown = Symbol('none');
let lastExecutor: unknown = lastOperation;

/**
 * Runs `body` inside `limit` and returns (or rethrows, unchanged) what the body returns (throws).
 * The limit's own queue decides who runs when; the body runs in the caller's async context.
 *
 * When metrics are exporting (a `meterProvider` was given, or `isMetricsExporting()`),
 * records `gym.resources.operation.queue_duration_ms` (asking the limit → holding it, or → leaving
 * the wait), `gym.resources.operation.duration_ms` with the outcome (holding → body settled), and
 * keeps the live `queued` / `active` counts. Otherwise it only enters and leaves the limit.
 *
 * Outcome: what the body assigned to `op.outcome`, else `ok` when it returns, `cancelled` when it
 * throws after `signal` aborted or throws an `AbortError`, else `error`.
 *
 * If `signal` aborts while the operation waits, it rejects at once with `signal.reason` and never
 * runs the body; the slot, if the limit grants it later, is given back at once. An operation whose
 * signal already aborted never touches the limit.
 *
 * Programming errors reject before the limit is touched: `RangeError` for an operation or executor
 * outside its set, `TypeError` for a limit, body or signal of the wrong kind. Telemetry failures
 * never reach the caller: they are reported once through `diag`.
 *
 * @param limit any limit `meteredLimit` can wrap (a `MeterableLimit`), a metered limit, or
 *   `null` for unlimited work.
 */
export function resourcesOperation<T>(
  limit: OperationLimit | null,
  options: ResourcesOperationOptions,
  body: (op: OperationContext) => PromiseLike<T> | T,
): Promise<T> {
  try {
    const { operation, executor } = options;
    if (operation !== lastOperation) {
      if (!isOperation(operation)) throw invalidChoice('resourcesOperation: options.operation', operation, OPERATIONS);
      lastOperation = operation;
    }
    if (executor !== lastExecutor) {
      if (!isExecutor(executor)) throw invalidChoice('resourcesOperation: options.executor', executor, EXECUTORS);
      lastExecutor = executor;
    }
    if (typeof body !== 'function') {
      throw new TypeError(`resourcesOperation: body must be a function; got ${describeValue(body)}`);
    }
    const signal = checkSignal(options.signal, 'resourcesOperation: options.signal');
    let gate: Gate | undefined;
    let admission: Admission | undefined;
    if (limit !== null) {
      const metered = meteredParts(limit);
      if (metered !== undefined) ({ gate, admission } = metered);
      else gate = typeof limit === 'object' || typeof limit === 'function' ? cachedGate(limit) : undefined;
      if (gate === undefined) throw badLimit(limit);
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    const rec = options.meterProvider != null || isMetricsExporting() ? recorderFor(options, operation, executor) : OFF;
    return run(gate, admission, signal, body, rec);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The recorder of a measured operation; OFF when no meter can be had (reported once). */
function recorderFor(options: ResourcesOperationOptions, operation: Operation, executor: Executor): Recorder {
  const meter = resolveMeter(options, SCOPE, reporter);
  return meter === undefined ? OFF : (measurement(meter, operation, executor) ?? OFF);
}

function badLimit(limit: unknown): TypeError {
  return new TypeError(
    `resourcesOperation: limit must be ${LIMIT_SHAPES}, a metered limit, or null for unlimited work; got ${describeValue(limit)}`,
  );
}
