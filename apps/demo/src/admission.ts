// Admission control for every limited route, in one place: the route's limit wrapped in a
// metered limit (`@gym/operations`) with a bounded queue (`maxQueued`) and a queue deadline
// (`admissionTimeoutMs`). A call that finds the queue full, or waits past the deadline, is
// refused at once with the overload status (`OVERLOADED_STATUS`) and `Retry-After`, never holds a slot, and is counted in telemetry
// by the metered limit's `gym.concurrency.admission_*_total` counters; a timed-out wait also
// records `resourcesOperation`'s queue wait with no run time (a refusal never waited). A client
// that leaves while queued leaves the queue the same way (counted as cancelled). The gate also
// keeps the peaks and the admitted count for `GET /limits` and the orchestrator's summary,
// whether or not telemetry is on.

import type { Executor, Operation } from '@gym/constants';
import {
  AdmissionRejectedError,
  AdmissionTimeoutError,
  type MeterableLimit,
  meteredLimit,
  type OperationContext,
  resourcesOperation,
} from '@gym/operations';
import { Semaphore } from 'async-mutex';
import { HttpError, OVERLOADED_MESSAGE, OVERLOADED_STATUS } from './http-error.js';

/** Seconds a refused client is told to wait before it tries again. */
export const RETRY_AFTER_SECONDS = 1;

/** A route's queue bounds. */
export interface AdmissionSettings {
  /** Calls allowed to wait for the limit at once; one more is refused at once. 0 = no waiting at all. */
  readonly maxQueued: number;
  /** A call waiting longer than this for the limit is refused. */
  readonly queueTimeoutMs: number;
  /** The server the limit belongs to (`nemo.gym.server.name` on the concurrency series). */
  readonly serverName?: string | undefined;
}

/** What a gate is put in front of. */
export interface GateOptions extends AdmissionSettings {
  /** The operation and executor recorded by `resourcesOperation`. */
  readonly operation: Operation;
  readonly executor: Executor;
  /** A bounded name for the limit (`verify_slots`): the metered limit's `limitName`. */
  readonly limitName: string;
  /** Slots of the limit; a p-limit limiter's is read from the limiter itself. */
  readonly capacity: number;
  /** How the limit is described to people (`async-mutex Semaphore(2)`). */
  readonly kind: string;
}

/** A gate's counts since the server started. */
export interface GateState {
  readonly limitName: string;
  readonly kind: string;
  readonly limit: number;
  readonly maxQueued: number;
  readonly queueTimeoutMs: number;
  /** Calls holding a slot now. */
  readonly active: number;
  /** Calls waiting for a slot now. */
  readonly queued: number;
  readonly peakActive: number;
  readonly peakQueued: number;
  /** Calls that got a slot. */
  readonly admitted: number;
  /** Refused at once: the queue was full. */
  readonly rejected: number;
  /** Refused after waiting the whole deadline. */
  readonly timedOut: number;
  /** Left the queue because their client went away. */
  readonly cancelled: number;
}

/** A limit behind admission control. */
export interface Gate {
  /** Runs `body` inside the limit; rejects with an `OVERLOADED_STATUS` `HttpError` when refused, with the client's reason when it left. */
  run<T>(signal: AbortSignal, body: (op: OperationContext) => Promise<T>): Promise<T>;
  state(): GateState;
}

/** The `OVERLOADED_STATUS` answer a refused call gets. */
export function overloaded(limitName: string, why: string): HttpError {
  return new HttpError(
    OVERLOADED_STATUS,
    `${OVERLOADED_MESSAGE}${why} (limit ${limitName}); retry after ${RETRY_AFTER_SECONDS} s`,
    {
      'retry-after': String(RETRY_AFTER_SECONDS),
    },
  );
}

/** Puts admission control in front of `limit`. */
export function createGate(limit: MeterableLimit, options: GateOptions): Gate {
  const { operation, executor, limitName, maxQueued, queueTimeoutMs } = options;
  const isPLimit = typeof limit === 'function';
  const metered = meteredLimit(limit, {
    component: 'resources',
    limitName,
    serverName: options.serverName,
    capacity: isPLimit ? undefined : options.capacity,
    admissionTimeoutMs: queueTimeoutMs,
    maxQueued,
  });
  let peakActive = 0;
  let peakQueued = 0;
  let admitted = 0;

  return {
    async run(signal, body) {
      let started = false;
      const call = resourcesOperation(metered, { operation, executor, signal }, async (op) => {
        started = true;
        admitted++;
        peakActive = Math.max(peakActive, metered.state().active);
        return body(op);
      });
      // The metered limit has queued or refused the call by now: its own count is the depth.
      peakQueued = Math.max(peakQueued, metered.state().queued);
      try {
        return await call;
      } catch (error) {
        // The metered limit's two refusals; `instanceof` holds across two copies of the package.
        if (!started && error instanceof AdmissionRejectedError) {
          throw overloaded(limitName, `${maxQueued} calls are already waiting`);
        }
        if (!started && error instanceof AdmissionTimeoutError) {
          throw overloaded(limitName, `no slot within the ${queueTimeoutMs} ms queue deadline`);
        }
        throw error;
      }
    },
    state() {
      const now = metered.state();
      return {
        limitName,
        kind: options.kind,
        limit: now.limit,
        maxQueued,
        queueTimeoutMs,
        active: now.active,
        queued: now.queued,
        peakActive,
        peakQueued,
        admitted,
        rejected: now.admissionRejected,
        timedOut: now.admissionTimeouts,
        cancelled: now.admissionCancelled,
      };
    },
  };
}

/** A gate in front of a new async-mutex `Semaphore(slots)`: the limit of the subprocess and upstream routes. */
export function createSemaphoreGate(slots: number, options: Omit<GateOptions, 'capacity' | 'kind'>): Gate {
  return createGate(new Semaphore(slots), { ...options, capacity: slots, kind: `async-mutex Semaphore(${slots})` });
}
