// resourcesOperation: check the arguments, choose the recorder once (OFF when nothing
// exports), and take the one run path.

import { EXECUTORS, type Executor, isExecutor, isOperation, OPERATIONS, type Operation } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { describeValue, invalidChoice, meterProviderOf } from '@gym/core/internal';
import type { MeterProvider } from '@opentelemetry/api';
import { cachedGate, enter, type Gate, notALimit } from './limits.js';
import { MeteredLimitImpl } from './metered-limit.js';
import { measurement } from './operation-metrics.js';
import { type Body, checkSignal, OFF, type Recorder, run, UNRECORDED_OP } from './run.js';
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
  const metered = limit instanceof MeteredLimitImpl ? limit : undefined;
  metered?.exportIfExporting(exporting);
  // A call that records nothing (raced, or through a metered limit) remembers nothing.
  const provider = meterProviderOf(options, exporting);
  const found = provider === undefined ? undefined : lastOrFind(limit, provider, options.operation, options.executor);
  const gate = found === undefined ? gateFor(limit) : found.gate;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return run(gate, metered?.admission, signal, body, found?.rec ?? OFF);
}

/** What a measured call's limit, provider and names resolve to. */
interface Found {
  readonly limit: OperationLimit | null;
  readonly provider: MeterProvider;
  readonly operation: Operation;
  readonly executor: Executor;
  readonly gate: Gate | undefined;
  readonly rec: Recorder;
}

/**
 * The last measured call's: a server measures the same limit on the same provider call after
 * call, and finding the gate and the series through their `WeakMap`s every time cost 1–2 % of a
 * measured call. Forgotten a second after it was kept (an unref'd timer), so a limit or provider
 * the caller dropped is held at most that long.
 */
let last: Found | undefined;
// The timer starts in the async context of the call that kept `last` and holds it as long.
const FORGET_AFTER_MS = 1000;

function forget(): void {
  last = undefined;
}

function lastOrFind(
  limit: OperationLimit | null,
  provider: MeterProvider,
  operation: Operation,
  executor: Executor,
): Found {
  const seen = last;
  if (
    seen !== undefined &&
    seen.limit === limit &&
    seen.provider === provider &&
    seen.operation === operation &&
    seen.executor === executor
  ) {
    return seen;
  }
  const found = {
    limit,
    provider,
    operation,
    executor,
    gate: gateFor(limit),
    rec: measurement(provider, operation, executor),
  };
  // A recorder that could not be had is not kept: the next call tries again.
  if (found.rec === OFF) return found;
  if (last === undefined) setTimeout(forget, FORGET_AFTER_MS).unref();
  last = found;
  return found;
}

function gateFor(limit: OperationLimit | null): Gate | undefined {
  if (limit instanceof MeteredLimitImpl) return limit.gate;
  return limit === null ? undefined : gateOfLimit(limit);
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
  throw notALimit(limit);
}
