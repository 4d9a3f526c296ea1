// resourcesOperation: check the arguments, choose the recorder once (OFF when nothing
// exports), and take the one run path.

import { EXECUTORS, isExecutor, isOperation, OPERATIONS } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { describeValue, invalidChoice, resolveMeter } from '@gym/core/internal';
import { cachedGate, type Gate, LIMIT_SHAPES } from './limits.js';
import { MeteredLimitImpl } from './metered-limit.js';
import { measurement } from './operation-metrics.js';
import { type Admission, checkSignal, OFF, run } from './run.js';
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
    let exporting: boolean | undefined;
    if (limit instanceof MeteredLimitImpl) {
      exporting = isMetricsExporting();
      limit.exportIfExporting(exporting);
      ({ gate, admission } = limit);
    } else if (limit !== null) {
      gate = typeof limit === 'object' || typeof limit === 'function' ? cachedGate(limit) : undefined;
      if (gate === undefined) {
        throw new TypeError(
          `resourcesOperation: limit must be ${LIMIT_SHAPES}, a metered limit, or null for unlimited work; got ${describeValue(limit)}`,
        );
      }
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    let rec = OFF;
    if (options.meterProvider != null || (exporting ?? isMetricsExporting())) {
      const meter = resolveMeter(options, SCOPE, reporter);
      rec = (meter && measurement(meter, operation, executor)) ?? OFF;
    }
    return run(gate, admission, signal, body, rec);
  } catch (error) {
    return Promise.reject(error);
  }
}
