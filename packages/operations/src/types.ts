// The public types. Limits are described by shape: async-mutex and p-limit are not dependencies.

import type { Component, Executor, Operation, Outcome } from '@gym/constants';
import type { MeterProvider } from '@opentelemetry/api';

export type { Component, Executor, Operation, Outcome };

/** Any limit entered through `acquire()`, released through what it resolved (a function, or `[value, release]`), else `release()`. */
export interface AcquireReleaseLimit {
  acquire(): Promise<unknown>;
  release?(): void;
}

/** An async-mutex `Mutex` or `Semaphore` (0.5), or the like. */
export interface MutexLike extends AcquireReleaseLimit {
  release(): void;
  isLocked(): boolean;
}
export interface SemaphoreLike extends MutexLike {
  getValue(): number;
}

/** A p-limit limiter (`pLimit(n)`, 6.x or 7.x): a function that runs a function in a slot. */
export interface PLimitLike {
  <Arguments extends unknown[], Result>(
    fn: (...args: Arguments) => PromiseLike<Result> | Result,
    ...args: Arguments
  ): Promise<Result>;
  readonly activeCount: number;
  readonly pendingCount: number;
  concurrency?: number;
}

/** A limit that {@link meteredLimit} can wrap; and what {@link resourcesOperation} can run in (or `null`). */
export type MeterableLimit = SemaphoreLike | MutexLike | PLimitLike | AcquireReleaseLimit;
export type OperationLimit = MeterableLimit | MeteredLimit;

export interface ResourcesOperationOptions {
  operation: Operation;
  executor: Executor;
  /** Aborted while waiting: rejects with `signal.reason`, the body never runs. While running: `op.signal`. */
  signal?: AbortSignal | undefined;
  /** Record on this provider's meter; else on the global one, only while metrics export. */
  meterProvider?: MeterProvider | null | undefined;
}

/** What the body of {@link resourcesOperation} receives. */
export interface OperationContext {
  /** Set it (one of OUTCOMES) when the body knows better than `ok` / `error` / `cancelled`. */
  outcome: Outcome | undefined;
  readonly signal: AbortSignal | undefined;
}

export interface MeteredLimitOptions {
  component: Component;
  /** Chosen in code, never an id: `^[a-z][a-z0-9_]{0,63}$`. */
  limitName: string;
  /** `nemo.gym.server.name`: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`. */
  serverName?: string | undefined;
  /** Slots the limiter cannot tell: required for an acquire()/release() object, a Semaphore's size, never for p-limit. */
  capacity?: number | undefined;
  /** A wait longer than this rejects with {@link AdmissionTimeoutError}. */
  admissionTimeoutMs?: number | undefined;
  /** A call that would wait while this many calls wait is refused with {@link AdmissionRejectedError}. */
  maxQueued?: number | undefined;
  /** Report on this provider's meter; else on the global one, only while metrics export. */
  meterProvider?: MeterProvider | null | undefined;
}

/** What `capacity` may be for a limit of type `L`. */
export type CapacityOption<L> = L extends PLimitLike
  ? { capacity?: undefined }
  : L extends MutexLike
    ? { capacity?: number | undefined }
    : { capacity: number };

export interface MeteredRunOptions {
  signal?: AbortSignal | undefined;
}

/** A metered limit's numbers now, kept whether or not telemetry is on. */
export interface MeteredLimitState {
  /** Its slots (p-limit: its `concurrency`, maybe `Infinity`), never below `active`. */
  readonly limit: number;
  /** Slots held, and calls waiting, through its metered limits; `available`: free slots, read from the limiter. */
  readonly active: number;
  readonly available: number;
  readonly queued: number;
  readonly admissionTimeouts: number;
  readonly admissionCancelled: number;
  readonly admissionRejected: number;
}

/** A limit exported as the `gym.concurrency.*` series, with admission control. */
export interface MeteredLimit {
  /** Runs `fn` in a slot; rejects without running it on a refusal, a deadline or an abort. */
  run<T>(fn: () => PromiseLike<T> | T, options?: MeteredRunOptions): Promise<T>;
  state(): MeteredLimitState;
  /** Takes it out of the export (it keeps working). */
  close(): void;
  [Symbol.dispose](): void;
}
