import type { EventEmitter } from 'node:events';
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';

/** Options of `startObserver`. */
export interface ObserverOptions {
  /** Record on a meter of this provider. Absent: the global provider, while exporting. */
  readonly meterProvider?: MeterProvider | null | undefined;
  /** How often the lag timer asks to wake, in ms: from 1 to 2^31 − 1 (the longest Node timer); default 100. */
  readonly lagIntervalMs?: number | undefined;
  /** Publish `gym.server.requests.in_flight` at 0 under this `nemo.gym.server.name` from the start. */
  readonly serverName?: string | undefined;
}

/** One caller's handle on the observer of a meter. */
export interface Observer {
  /** Releases this handle; the last handle on a meter stops its sampler. Idempotent; never throws. */
  stop(): void;
}

/** Options of `trackInFlight`. */
export interface TrackInFlightOptions {
  /** The `nemo.gym.server.name` of every count. */
  readonly serverName?: string | undefined;
  /** Record on a meter of this provider. Absent: the global provider, while exporting. */
  readonly meterProvider?: MeterProvider | null | undefined;
}

/** Stops counting new requests of a server; requests already counted still end their count. Idempotent. */
export type Untrack = () => void;

/** What `trackInFlight` accepts: a `node:http` or `node:https` server. */
export type RequestEmitter = Pick<EventEmitter, 'listenerCount' | 'on' | 'prependListener' | 'removeListener'>;

/** Options of `startupTimeline`. */
export interface StartupTimelineOptions {
  /** The `nemo.gym.server.name` of every point and span. */
  readonly serverName: string;
  /** Record the stage durations on a meter of this provider. Absent: the global provider, while exporting. */
  readonly meterProvider?: MeterProvider | null | undefined;
  /** Write the stage spans with a tracer of this provider, whatever the span groups. Absent: the
   * global provider, while traces export and the `startup` span group is on. */
  readonly tracerProvider?: TracerProvider | null | undefined;
}

/** A server process's startup timeline. */
export interface StartupTimeline {
  /** Ends the current stage now and names it `stage`. Ignored after `report()` and beyond 32 stages. */
  mark(stage: string): void;
  /** Records every stage once; later calls do nothing. Never throws. */
  report(): void;
}
