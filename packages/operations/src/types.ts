// The public surface of @gym/operations, in one place. Limits are described by shape, not by
// import: async-mutex and p-limit are not dependencies of this package, so a user brings
// whichever version they have and the types below only say what this package calls on it.

import type { Component, Executor, Operation, Outcome } from '@gym/constants';
import type { MeterProvider } from '@opentelemetry/api';

export type { Component, Executor, Operation, Outcome };

/**
 * An async-mutex `Semaphore` (0.5), or anything with the same public methods. Entered through its
 * own `acquire()`; a caller that stops waiting leaves at once, and the unit, when granted, is
 * released at once.
 */
export interface SemaphoreLike {
  /** Takes one unit; async-mutex resolves `[previousValue, releaser]`. */
  acquire(): Promise<unknown>;
  /** Gives one unit back. */
  release(): void;
  /** True when no unit is free. */
  isLocked(): boolean;
  /** Free units right now. */
  getValue(): number;
}

/** An async-mutex `Mutex` (0.5), or anything with the same public methods. Entered like {@link SemaphoreLike}. */
export interface MutexLike {
  /** Takes the lock; async-mutex resolves the releaser. */
  acquire(): Promise<unknown>;
  /** Gives the lock back. */
  release(): void;
  /** True while held. */
  isLocked(): boolean;
}

/**
 * A p-limit limiter (`pLimit(n)`, 6.x or 7.x). An operation waits in p-limit's own queue as a
 * function that holds its slot open while the body runs; a caller that stops waiting leaves at
 * once, and its place, when p-limit starts it, gives the slot straight back.
 */
export interface PLimitLike {
  /** Runs `fn(...args)` when a slot is free; resolves or rejects with its result. */
  <Arguments extends unknown[], Result>(
    fn: (...args: Arguments) => PromiseLike<Result> | Result,
    ...args: Arguments
  ): Promise<Result>;
  /** Bodies running now. */
  readonly activeCount: number;
  /** Bodies waiting in the limiter's own queue now. */
  readonly pendingCount: number;
  /** How many bodies may run at once; may be changed at run time (p-limit 6+). */
  concurrency?: number;
}

/**
 * Any other limit: `acquire()` resolves when the caller holds it. If it resolves a function,
 * that function releases; if it resolves `[value, releaser]` (async-mutex decorators such as
 * `withTimeout`), the releaser is called; otherwise `release()` is called. A rejection of
 * `acquire()` (for example async-mutex's `E_TIMEOUT`) fails the operation before its body runs.
 */
export interface AcquireReleaseLimit {
  /** Resolves when the caller holds the limit. */
  acquire(): Promise<unknown>;
  /** Releases, when `acquire()` did not resolve a releaser. */
  release?(): void;
}

/** A limit that {@link meteredLimit} can wrap. */
export type MeterableLimit = SemaphoreLike | MutexLike | PLimitLike | AcquireReleaseLimit;

/**
 * What {@link resourcesOperation} can wait on: any limit {@link meteredLimit} can wrap, or a
 * metered limit. `null` (unlimited work) is accepted too: it is measured (queue time 0) but
 * never waits.
 */
export type OperationLimit = MeterableLimit | MeteredLimit;

/** Options of {@link resourcesOperation}. */
export interface ResourcesOperationOptions {
  /** What kind of work this is; a metric attribute, so one of OPERATIONS (a string, nothing that converts to one). */
  operation: Operation;
  /** Where it runs; a metric attribute, so one of EXECUTORS (a string, nothing that converts to one). */
  executor: Executor;
  /**
   * Cancels the operation. A real `AbortSignal` (anything else is a `TypeError`). While waiting
   * for the limit (or after a slot was granted but before the body started): it leaves at once,
   * never runs the body, and rejects with `signal.reason`; a slot granted later is given straight
   * back. While running: the body sees it as `op.signal` and decides; if the body then throws,
   * the outcome is `cancelled`.
   */
  signal?: AbortSignal | undefined;
  /** Record on a meter of this provider. Else the global provider is used, and only while metrics are exporting. */
  meterProvider?: MeterProvider | null | undefined;
}

/** What the body of {@link resourcesOperation} receives. */
export interface OperationContext {
  /**
   * How the operation ended, when the body knows better than "returned" (`ok`) or "threw"
   * (`error`/`cancelled`): set `timeout` or `crashed` (or any of OUTCOMES) and then return or
   * throw. Assigning a value outside OUTCOMES throws a `RangeError` at the assignment. This
   * setter is the only way the body reports an outcome.
   */
  outcome: Outcome | undefined;
  /** The signal of the options, for the body to pass on (for example to `fetch` or `spawn`). */
  readonly signal: AbortSignal | undefined;
}

/** Options of {@link meteredLimit}. */
export interface MeteredLimitOptions {
  /** Where the limit sits: one of COMPONENTS. A metric attribute. */
  component: Component;
  /** The limit's name, chosen in code: `^[a-z][a-z0-9_]{0,63}$` (e.g. `upstream_requests`). A metric attribute; never an id. */
  limitName: string;
  /** The server the limit belongs to (`nemo.gym.server.name`): `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`, at most 64 distinct per process exported. Omitted: no such attribute. */
  serverName?: string | undefined;
  /**
   * Slots of an acquire()/release() limit (required there). A Mutex: 1 if given. A Semaphore: not
   * needed (accepted and unused; its value is read live). A p-limit limiter: not allowed (its
   * `concurrency` is read live).
   */
  capacity?: number | undefined;
  /** A wait longer than this many milliseconds rejects with {@link AdmissionTimeoutError}. Omitted: no deadline. */
  admissionTimeoutMs?: number | undefined;
  /**
   * A call that finds no free slot while this many calls through this metered limit already wait
   * is refused at once with {@link AdmissionRejectedError}. A call that finds a free slot is never
   * refused. Omitted: unbounded.
   */
  maxQueued?: number | undefined;
  /** Report on a meter of this provider. Else the global provider is used, and only while metrics are exporting. */
  meterProvider?: MeterProvider | null | undefined;
}

/** Options of {@link MeteredLimit.run}. */
export interface MeteredRunOptions {
  /** Aborting it while the call waits ends the wait: it rejects with `signal.reason` and counts as cancelled. */
  signal?: AbortSignal | undefined;
}

/** A metered limit's numbers right now, kept whether or not telemetry is on. */
export interface MeteredLimitState {
  /** Slots of the limit, read from the limiter (p-limit: its `concurrency`, maybe `Infinity`). */
  readonly limit: number;
  /** Slots held through this metered limit now (direct calls on the raw limiter are not counted). */
  readonly active: number;
  /** Free slots now, read from the limiter, never negative. */
  readonly available: number;
  /** Calls waiting for a slot through this metered limit now. */
  readonly queued: number;
  /** Waits that ran out of admission time, since the limit was made. */
  readonly admissionTimeouts: number;
  /** Waits ended by the caller's signal, since the limit was made. */
  readonly admissionCancelled: number;
  /** Calls refused at once because `maxQueued` calls were waiting, since the limit was made. */
  readonly admissionRejected: number;
}

/**
 * A limit whose live state is exported as the `gym.concurrency.*` series, with admission control.
 * Pass it to {@link resourcesOperation} like any limit, or use it directly through `run`.
 */
export interface MeteredLimit {
  /** One of COMPONENTS. */
  readonly component: Component;
  /** The limit's name. */
  readonly limitName: string;
  /** The server name, when given. */
  readonly serverName: string | undefined;
  /**
   * Runs `fn` inside the limit and returns (or rethrows) what it returns (throws). Rejects without
   * running `fn` and without holding a slot with {@link AdmissionRejectedError} (queue full),
   * {@link AdmissionTimeoutError} (waited too long) or `signal.reason` (aborted while waiting).
   */
  run<T>(fn: () => PromiseLike<T> | T, options?: MeteredRunOptions): Promise<T>;
  /** The numbers right now. */
  state(): MeteredLimitState;
  /** Takes this limit out of the export at once (it keeps working). */
  close(): void;
  /** The same as `close()`, for `using`. */
  [Symbol.dispose](): void;
}
