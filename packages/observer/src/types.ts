// The public surface of @gym/observer. Internal shapes live next to their code and are never
// re-exported.

import type { MeterProvider, TracerProvider } from '@opentelemetry/api';

/** Options of `startObserver`. Every field is optional. */
export interface ObserverOptions {
  /** Record on a meter of this provider. Absent: the global provider, while exporting. */
  readonly meterProvider?: MeterProvider | null | undefined;
  /**
   * How often the event-loop lag timer asks to wake, in milliseconds: one `gym.event_loop.lag_ms`
   * sample per interval. A finite number from 1 to 2^31 − 1 (the longest Node timer); default 100.
   */
  readonly lagIntervalMs?: number | undefined;
  /**
   * This server's name. When given, `gym.server.requests.in_flight` is published at 0 under
   * `nemo.gym.server.name` from the start, so an idle server shows 0 rather than no series.
   * Must match `SERVER_NAME_PATTERN` (1 to 128 of `A-Z a-z 0-9 _ . -`, not starting with `_ . -`).
   */
  readonly serverName?: string | undefined;
}

/** One caller's handle on the observer of a meter. */
export interface Observer {
  /**
   * Releases this handle. When it was the last handle on its meter, stops every timer and
   * observer the sampler started and stops reporting its observable instruments; other handles
   * keep it running. Idempotent; never throws. After the last stop, `startObserver` starts afresh.
   */
  stop(): void;
}

/** Options of `trackInFlight`. Every field is optional. */
export interface TrackInFlightOptions {
  /** The `nemo.gym.server.name` attribute of every count; must match `SERVER_NAME_PATTERN`. */
  readonly serverName?: string | undefined;
  /** Record on a meter of this provider. Absent: the global provider, while exporting. */
  readonly meterProvider?: MeterProvider | null | undefined;
}

/** Stops counting new requests of a server; requests already counted still end their count. Idempotent. */
export type Untrack = () => void;

/** What `trackInFlight` accepts: a `node:http` or `node:https` server, or anything emitting `'request'` like one. */
export interface RequestEmitter {
  prependListener(event: 'request', listener: (request: unknown, response: unknown) => void): unknown;
  removeListener(event: 'request', listener: (request: unknown, response: unknown) => void): unknown;
}

/** Options of `startupTimeline`. */
export interface StartupTimelineOptions {
  /** This server's name, the `nemo.gym.server.name` of every point and span; must match `SERVER_NAME_PATTERN`. */
  readonly serverName: string;
  /** Record the stage durations on a meter of this provider. Absent: the global provider, while exporting. */
  readonly meterProvider?: MeterProvider | null | undefined;
  /**
   * Write the stage spans with a tracer of this provider, whatever the span groups. Absent: the
   * global provider, while traces export and the `startup` span group is on.
   */
  readonly tracerProvider?: TracerProvider | null | undefined;
}

/** A server process's startup timeline. */
export interface StartupTimeline {
  /**
   * Ends the current stage now and names it `stage` (1 to 64 of `A-Z a-z 0-9 _ -`, starting with a
   * letter; anything else throws a `RangeError`). A repeated name adds a second stage. Ignored after
   * `report()`, and beyond 32 stages. Never throws otherwise.
   */
  mark(stage: string): void;
  /**
   * Records every stage once: one `gym.server.startup_stage_duration_ms` point each and, under the
   * `startup` span group, one span each under a `gym.server.startup` span that covers them exactly.
   * Later calls do nothing. Never throws.
   */
  report(): void;
}
