// resourcesOperation: check the arguments, choose the recorder once (OFF when nothing
// exports), and take the one run path.

import { EXECUTORS, isExecutor, isOperation, OPERATIONS } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { describeValue, invalidChoice, meterProviderOf } from '@gym/core/internal';
import { cachedGate, enter, type Gate, LIMIT_SHAPES } from './limits.js';
import { MeteredLimitImpl } from './metered-limit.js';
import { measurement } from './operation-metrics.js';
import { type Admission, type Body, checkSignal, OFF, run, UNRECORDED_OP } from './run.js';
import type {
  AcquireReleaseLimit,
  OperationContext,
  OperationLimit,
  PLimitLike,
  ResourcesOperationOptions,
} from './types.js';

// The last operation and executor accepted: only a new value is looked up.
let lastOperation: unknown = Symbol('none');
let lastExecutor: unknown = lastOperation;

/**
 * Runs `body` inside `limit` (any `MeterableLimit`, a metered limit, or `null`: unlimited) and
 * returns or rethrows what the body does. The limit's own queue decides who runs when; the body
 * runs in the caller's async context. Measured while metrics export (or with a `meterProvider`).
 * Programming errors reject before the limit is touched; telemetry failures never reach the caller.
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
    const exporting = isMetricsExporting();
    const measured = exporting || options.meterProvider != null;
    // The off path: nothing records, nothing races the wait; the limit runs the body itself.
    const plain = typeof limit === 'function' || (limit !== null && !(limit instanceof MeteredLimitImpl));
    if (!measured && signal === undefined && plain) {
      return enter(limit as PLimitLike | AcquireReleaseLimit, body, UNRECORDED_OP);
    }
    return measuredOrRaced(limit, options, signal, exporting, body);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Every call but an unrecorded one with nothing to race through a plain limit; kept apart so the off path stays small. */
function measuredOrRaced<T>(
  limit: OperationLimit | null,
  options: ResourcesOperationOptions,
  signal: AbortSignal | undefined,
  exporting: boolean,
  body: Body<T>,
): Promise<T> {
  let gate: Gate | undefined;
  let admission: Admission | undefined;
  if (limit instanceof MeteredLimitImpl) {
    limit.exportIfExporting(exporting);
    ({ gate, admission } = limit);
  } else if (limit !== null) {
    gate = gateOfLimit(limit);
  }
  if (signal?.aborted) return Promise.reject(signal.reason);
  const provider = meterProviderOf(options, exporting);
  const rec = provider === undefined ? OFF : measurement(provider, options.operation, options.executor);
  return run(gate, admission, signal, body, rec);
}

function acceptNames(operation: unknown, executor: unknown): void {
  if (!isOperation(operation)) throw invalidChoice('resourcesOperation: options.operation', operation, OPERATIONS);
  if (!isExecutor(executor)) throw invalidChoice('resourcesOperation: options.executor', executor, EXECUTORS);
  lastOperation = operation;
  lastExecutor = executor;
}

/** The gate of `limit`; a value that is no limit (a primitive too: a `WeakMap` finds nothing for it) is a TypeError. */
function gateOfLimit(limit: object): Gate {
  const gate = cachedGate(limit);
  if (gate !== undefined) return gate;
  throw new TypeError(
    `resourcesOperation: limit must be ${LIMIT_SHAPES}, a metered limit, or null for unlimited work; got ${describeValue(limit)}`,
  );
}
