// resourcesOperation: check the arguments, choose the recorder once (OFF when nothing
// exports), and take the one run path.

import { EXECUTORS, isExecutor, isOperation, OPERATIONS } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { describeValue, invalidChoice, meterProviderOf } from '@gym/core/internal';
import { enter, gateFor } from './limits.js';
import { MeteredLimitImpl } from './metered-limit.js';
import { measurement } from './operation-metrics.js';
import { checkSignal, OFF, run, UNRECORDED_OP } from './run.js';
import type { MeterableLimit, OperationContext, OperationLimit, ResourcesOperationOptions } from './types.js';

/**
 * Runs `body` in a slot of `limit` (`null`: unlimited) and returns or rethrows what the body
 * does. The limiter's own queue decides who runs when; the body runs in the caller's async
 * context. Measured while metrics export (or with a `meterProvider`). Programming errors reject
 * before the limit is touched; telemetry failures never reach the caller.
 */
export function resourcesOperation<T>(
  limit: OperationLimit | null,
  options: ResourcesOperationOptions,
  body: (op: OperationContext) => PromiseLike<T> | T,
): Promise<T> {
  try {
    const { operation, executor } = options;
    if (!isOperation(operation)) throw invalidChoice('resourcesOperation: options.operation', operation, OPERATIONS);
    if (!isExecutor(executor)) throw invalidChoice('resourcesOperation: options.executor', executor, EXECUTORS);
    if (typeof body !== 'function') {
      throw new TypeError(`resourcesOperation: body must be a function; got ${describeValue(body)}`);
    }
    const signal = checkSignal(options.signal, 'resourcesOperation: options.signal');
    const exporting = isMetricsExporting();
    const metered = limit instanceof MeteredLimitImpl ? limit : undefined;
    // Off: nothing records, nothing races the wait; the limiter runs the body itself.
    if (!exporting && signal === undefined && metered === undefined && options.meterProvider == null) {
      return enter(limit as MeterableLimit | null, body, UNRECORDED_OP);
    }
    metered?.exportIfExporting(exporting);
    const gate = metered?.gate ?? (limit === null ? undefined : gateFor(limit));
    if (signal?.aborted) return Promise.reject(signal.reason);
    const provider = meterProviderOf(options, exporting);
    const rec = provider === undefined ? OFF : measurement(provider, operation, executor);
    return run(gate, metered?.admission, signal, body, rec);
  } catch (error) {
    return Promise.reject(error);
  }
}
