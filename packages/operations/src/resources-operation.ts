// resourcesOperation: wait for a limit, run the body inside it, and — only when metrics are
// exporting — record how long it waited, how long it ran and how it ended. The decision is
// taken once, at entry, and then the code forks: every adapter's `runUnmeasured` enters and
// leaves the limit and does nothing else (no clock, no counts, no instruments), and its
// `runMeasured` does the same while telling a Measurement. Two small runners per adapter are the
// price of an unmeasured path that is free by construction rather than by a flag checked at
// every step.
//
// Arguments that decide the work (limit, operation, executor, signal, body) are programming
// errors when wrong and reject at once. Options that only decide the telemetry (meter,
// meterProvider, clock) can never fail the operation: when reading one throws, or a clock is
// not a function, it is reported once and the operation runs unmeasured or on the default clock.

import { EXECUTORS, type Executor, OPERATIONS, type Operation } from '@gym/constants';
import { describeValue, invalidChoice, isMetricsExporting, resolveMeter } from '@gym/core';
import { isSignal } from './abort-watch.js';
import type { Body, LimitAdapter } from './internal-types.js';
import { adapterFor, lastSeen } from './limit-registry.js';
import { defaultClock, Measurement } from './measurement.js';
import { operationMetricsFor } from './operation-metrics.js';
import { reporter, SCOPE } from './report.js';
import type { OperationContext, OperationLimit, ResourcesOperationOptions } from './types.js';

// Membership tables built from the constants: a property read of a small fast-mode object is
// cheaper than Set#has on the hot path. The `typeof` check in front keeps out anything that
// merely converts to a member (an array `['verify']`, a `String` object, an object with
// `toString`), and `=== true` keeps out inherited names (`toString`, `__proto__`).
const IS_OPERATION: Record<string, unknown> = {};
for (const operation of OPERATIONS) IS_OPERATION[operation] = true;
const IS_EXECUTOR: Record<string, unknown> = {};
for (const executor of EXECUTORS) IS_EXECUTOR[executor] = true;

/**
 * Runs `body` inside `limit` and returns (or rethrows, unchanged) what the body returns (throws).
 *
 * When metrics are exporting (a `meter` or `meterProvider` was injected, or `isMetricsExporting()`),
 * records `gym.resources.operation.queue_duration_ms` (asking the limit → holding it),
 * `gym.resources.operation.duration_ms` with the outcome (holding → body settled), and keeps the
 * live `queued` / `active` counts. Otherwise it only enters and leaves the limit.
 *
 * Outcome: what the body assigned to `op.outcome`, else `ok` when it returns, `cancelled` when it
 * throws after `signal` aborted or throws an `AbortError`, else `error`.
 *
 * If `signal` aborts while the operation waits for the limit (or after a slot was granted but
 * before the body started), it stops waiting, never runs the body, never keeps a slot and rejects
 * with `signal.reason`. An operation whose signal is already aborted never touches the limit.
 *
 * Programming errors reject before the limit is touched: `RangeError` for an operation or
 * executor outside its set, `TypeError` for a limit, body or signal of the wrong kind.
 * Telemetry failures (a throwing meter, clock or telemetry option) never reach the caller: they
 * are reported once through `diag`.
 *
 * @param limit an async-mutex `Semaphore` or `Mutex`, a p-limit limiter, any `acquire()`/`release()`
 *   object, a metered limit, or `null` for unlimited work.
 */
export function resourcesOperation<T>(
  limit: OperationLimit | null,
  options: ResourcesOperationOptions,
  body: (op: OperationContext) => PromiseLike<T> | T,
): Promise<T> {
  // Kept small so that it can be inlined into its caller: the common case (valid arguments,
  // nothing measured) is a handful of checks and one call; errors and measuring live in the
  // functions below.
  try {
    if (options === null || typeof options !== 'object') return Promise.reject(badOptions(options));
    const operation: unknown = options.operation;
    const executor: unknown = options.executor;
    const signal: unknown = options.signal;
    if (
      typeof operation !== 'string' ||
      IS_OPERATION[operation] !== true ||
      typeof executor !== 'string' ||
      IS_EXECUTOR[executor] !== true ||
      typeof body !== 'function' ||
      (signal !== undefined && !isSignal(signal))
    ) {
      return Promise.reject(badArgument(operation, executor, body, signal));
    }
    const adapter = limit === lastSeen.limit ? lastSeen.adapter : adapterFor(limit);
    if (adapter === undefined) return Promise.reject(badLimit(limit));
    if (wouldMeasure(options)) {
      return runMeasuring(adapter, options, operation as Operation, executor as Executor, signal, body);
    }
    if (signal === undefined) return adapter.runUnmeasured(undefined, body);
    if (signal.aborted) return Promise.reject(signal.reason);
    return adapter.runUnmeasured(signal, body);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** An operation that would be measured: measured when a meter and its instruments can be had, else unmeasured. */
function runMeasuring<T>(
  adapter: LimitAdapter,
  options: ResourcesOperationOptions,
  operation: Operation,
  executor: Executor,
  signal: AbortSignal | undefined,
  body: Body<T>,
): Promise<T> {
  const m = measurementFor(options, operation, executor);
  if (m === undefined) {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return adapter.runUnmeasured(signal, body);
  }
  if (signal?.aborted) {
    m.abortedBeforeAsking();
    return Promise.reject(signal.reason);
  }
  return adapter.runMeasured(signal, body, m);
}

function badOptions(options: unknown): TypeError {
  return new TypeError(`resourcesOperation: options must be an object; got ${describeValue(options)}`);
}

/** The error for the first argument that is wrong, in the order they are checked. */
function badArgument(operation: unknown, executor: unknown, body: unknown, signal: unknown): Error {
  if (typeof operation !== 'string' || IS_OPERATION[operation] !== true) {
    return invalidChoice('resourcesOperation: options.operation', operation, OPERATIONS);
  }
  if (typeof executor !== 'string' || IS_EXECUTOR[executor] !== true) {
    return invalidChoice('resourcesOperation: options.executor', executor, EXECUTORS);
  }
  if (typeof body !== 'function') {
    return new TypeError(`resourcesOperation: body must be a function; got ${describeValue(body)}`);
  }
  return new TypeError(`resourcesOperation: options.signal must be an AbortSignal; got ${describeValue(signal)}`);
}

/**
 * Whether this operation is measured: @gym/core's `wouldRecordMetrics` rule exactly (an own
 * `meter` or `meterProvider` object, else `isMetricsExporting()`; `null` is "not injected"),
 * written out because this runs on every unmeasured operation and the generic helper's two
 * `Object.hasOwn` calls cost several times the rest of this check. Here each option is read
 * once with a plain property read, and `Object.hasOwn` runs only when the value is an object
 * (an injected meter, or something a polluted prototype supplies), so the common case is two
 * cheap reads and `isMetricsExporting()`. A throwing `meter`/`meterProvider` getter means no.
 */
function wouldMeasure(options: ResourcesOperationOptions): boolean {
  try {
    const meter: unknown = options.meter;
    const provider: unknown = options.meterProvider;
    // The common case first (neither given): nothing more to look at but the exporting check.
    if (meter === undefined && provider === undefined) return isMetricsExporting();
    return (
      isOwnObject(options, meter, 'meter') || isOwnObject(options, provider, 'meterProvider') || isMetricsExporting()
    );
  } catch (error) {
    reporter.warnOnce('options', 'reading options.meter or options.meterProvider threw; not measured', error);
    return false;
  }
}

/** The Measurement of one operation, or `undefined` when no meter or instruments could be had. Never throws. */
function measurementFor(
  options: ResourcesOperationOptions,
  operation: Operation,
  executor: Executor,
): Measurement | undefined {
  const meter = resolveMeter(options, SCOPE, reporter);
  if (meter === undefined) return undefined;
  const metrics = operationMetricsFor(meter);
  if (metrics === undefined) return undefined;
  return new Measurement(metrics, metrics.series(operation, executor), clockOf(options));
}

/** `options.clock` when it is a function, else the default clock (a bad one reported once). */
function clockOf(options: ResourcesOperationOptions): () => number {
  let clock: unknown;
  try {
    clock = options.clock;
  } catch (error) {
    reporter.warnOnce('clock-option-read', 'reading options.clock threw; the default clock is used', error);
    return defaultClock;
  }
  if (clock === undefined || clock === null) return defaultClock;
  if (typeof clock === 'function') return clock as () => number;
  reporter.warnOnce(
    'clock-option-type',
    () => `options.clock must be a function; got ${describeValue(clock)}; the default clock is used`,
  );
  return defaultClock;
}

/** `value`, read as `options[key]`, is an object and an own property (what counts as injected). */
function isOwnObject(options: object, value: unknown, key: string): boolean {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && Object.hasOwn(options, key);
}

function badLimit(limit: unknown): TypeError {
  return new TypeError(
    'resourcesOperation: limit must be an async-mutex Semaphore or Mutex, a p-limit limiter, an object with ' +
      `acquire() (and release()), a metered limit, or null for unlimited work; got ${describeValue(limit)}`,
  );
}
