// The public surface of @gym/operations. Limits are described by shape, not by import:
// async-mutex and p-limit are not dependencies, so these types only say what this package calls.

import type { Component, Executor, Operation, Outcome } from '@gym/constants';
import type { MeterProvider } from '@opentelemetry/api';

export type { Component, Executor, Operation, Outcome };

/** An async-mutex `Mutex` (0.5), or anything with the same public methods; released through what `acquire()` resolved. */
export interface MutexLike extends AcquireReleaseLimit {
  release(): void;
  /** True when no unit is free. */
  isLocked(): boolean;
}

/** An async-mutex `Semaphore` (0.5), or anything with the same public methods. */
export interface SemaphoreLike extends MutexLike {
  /** Free units right now. */
  getValue(): number;
}

/** A p-limit limiter (`pLimit(n)`, 6.x or 7.x). An operation waits in p-limit's own queue. */
export interface PLimitLike {
  <Arguments extends unknown[], Result>(
    fn: (...args: Arguments) => PromiseLike<Result> | Result,
    ...args: Arguments
  ): Promise<Result>;
  readonly activeCount: number;
  readonly pendingCount: number;
  /** How many bodies may run at once; may be changed at run time (p-limit 6+). */
  concurrency?: number;
}

/**
 * Any other limit: `acquire()` resolves when the caller holds it. If it resolves a function, that
 * function releases; if it resolves `[value, releaser]` (async-mutex's `withTimeout`), the
 * releaser is called; otherwise `release()` is. A rejection of `acquire()` fails the operation
 * before its body runs.
 */
export interface AcquireReleaseLimit {
  acquire(): Promise<unknown>;
  release?(): void;
}

/** A limit that {@link meteredLimit} can wrap. */
export type MeterableLimit = SemaphoreLike | MutexLike | PLimitLike | AcquireReleaseLimit;

/** What {@link resourcesOperation} can wait on (or `null`: unlimited work, measured, never waiting). */
export type OperationLimit = MeterableLimit | MeteredLimit;

/** Options of {@link resourcesOperation}. */
export interface ResourcesOperationOptions {
  /** What kind of work this is: one of OPERATIONS (a metric attribute). */
  operation: Operation;
  /** Where it runs: one of EXECUTORS (a metric attribute). */
  executor: Executor;
  /**
   * A real `AbortSignal` (anything else is a `TypeError`). Aborted while waiting: the operation
   * leaves at once, never runs the body and rejects with `signal.reason`. While running: the body
   * sees it as `op.signal`; if the body then throws, the outcome is `cancelled`.
   */
  signal?: AbortSignal | undefined;
  /** Record on a meter of this provider. Else the global provider, only while metrics are exporting. */
  meterProvider?: MeterProvider | null | undefined;
}

/** What the body of {@link resourcesOperation} receives. */
export interface OperationContext {
  /**
   * How the operation ended, when the body knows better than `ok` (returned) or `error` /
   * `cancelled` (threw): set `timeout`, `crashed` or any of OUTCOMES, then return or throw. Any
   * other value is a `RangeError` at the assignment.
   */
  outcome: Outcome | undefined;
  /** The signal of the options, for the body to pass on. */
  readonly signal: AbortSignal | undefined;
}

/** Options of {@link meteredLimit}. */
export interface MeteredLimitOptions {
  /** Where the limit sits: one of COMPONENTS. */
  component: Component;
  /** The limit's name, chosen in code: `^[a-z][a-z0-9_]{0,63}$`; never an id. */
  limitName: string;
  /** `nemo.gym.server.name`: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`, at most 64 distinct per process exported. */
  serverName?: string | undefined;
  /**
   * Slots of the limit, where the limiter cannot tell them: required for an acquire()/release()
   * object; for an async-mutex Semaphore, which tells only its free units, its size (say it when
   * direct callers may hold units: without it the limit is the free units plus the units held
   * through the metered limit). A Mutex: 1 if given. A p-limit limiter: not allowed (read live).
   */
  capacity?: number | undefined;
  /** A wait longer than this many milliseconds rejects with {@link AdmissionTimeoutError}. */
  admissionTimeoutMs?: number | undefined;
  /**
   * A call that finds no free slot while this many calls through this limit already wait is
   * refused at once with {@link AdmissionRejectedError}. A call that finds a free slot never is.
   */
  maxQueued?: number | undefined;
  /** Report on a meter of this provider. Else the global provider, only while metrics are exporting. */
  meterProvider?: MeterProvider | null | undefined;
}

/**
 * What `capacity` may be for a limit of type `L`: never for a p-limit limiter (read live),
 * optional for a Semaphore or Mutex, required for any other acquire()/release() object.
 */
export type CapacityOption<L> = L extends PLimitLike
  ? { capacity?: undefined }
  : L extends MutexLike
    ? { capacity?: number | undefined }
    : { capacity: number };

/** Options of {@link MeteredLimit.run}. */
export interface MeteredRunOptions {
  /** Aborting it while the call waits rejects with `signal.reason` and counts as cancelled. */
  signal?: AbortSignal | undefined;
}

/** A metered limit's numbers right now, kept whether or not telemetry is on. */
export interface MeteredLimitState {
  /**
   * Slots of the limit: read from the limiter (p-limit: its `concurrency`, maybe `Infinity`), or
   * the `capacity` given; never below `active`.
   */
  readonly limit: number;
  /** Slots held through this metered limit now (direct calls on the raw limiter are not counted). */
  readonly active: number;
  /** Free slots now, read from the limiter. */
  readonly available: number;
  /** Calls through this metered limit waiting for a slot now. */
  readonly queued: number;
  readonly admissionTimeouts: number;
  readonly admissionCancelled: number;
  readonly admissionRejected: number;
}

/** A limit whose live state is exported as the `gym.concurrency.*` series, with admission control. */
export interface MeteredLimit {
  /**
   * Runs `fn` inside the limit and returns (or rethrows) what it does. Rejects without running
   * `fn` with {@link AdmissionRejectedError}, {@link AdmissionTimeoutError} or `signal.reason`.
   */
  run<T>(fn: () => PromiseLike<T> | T, options?: MeteredRunOptions): Promise<T>;
  state(): MeteredLimitState;
  /** Takes this limit out of the export at once (it keeps working). */
  close(): void;
  /** The same as `close()`, for `using`. */
  [Symbol.dispose](): void;
}
