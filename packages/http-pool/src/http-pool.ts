// Connection-pool telemetry for undici and fetch, under Gym's `gym.http.connection_pool.*`
// names. Two sources, both undici's own public surfaces, nothing patched:
//
// - `connect_total` counts undici's `undici:request:create` diagnostics_channel event. Channels
//   are global by name, so the npm undici and the undici inside Node's fetch are both seen.
//   undici creates the request when a connection takes it; a request that waited in a Pool's
//   queue is counted when it leaves the queue.
// - `queue_duration_ms` needs the moment a request entered the pool, and no channel event
//   marks it: a Pool keeps a waiting request as `{ opts, handler }` and publishes nothing until
//   a connection takes it. So `observe(pool)` returns the pool with its `dispatch` wrapped, the
//   way undici's own `compose` does it: after the pool's own dispatch, the request queued when
//   undici neither started it nor has room for more and `pool.stats.queued` is not zero; the
//   wait ends when undici starts the request on a connection. Requests that did not queue get
//   no point.
//
// Off is free: when nothing exports, nothing subscribes to any channel and `observe` returns
// the pool itself.

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  ATTR_HTTP_DESTINATION_SERVER_NAME,
  ATTR_HTTP_POOL_QUEUE_CONSTRAINT,
  ATTR_HTTP_POOL_QUEUE_OUTCOME,
  HTTP_DESTINATION_EXTERNAL,
  type HttpPoolQueueOutcome,
  INSTRUMENTS,
  SERVER_NAME_PATTERN,
} from '@gym/constants';
import { createInstrument, createReporter, invalidChoice, resolveMeter } from '@gym/core/internal';
import type { Attributes, Histogram, MeterProvider, ObservableCounter, ObservableResult } from '@opentelemetry/api';
import { waiterFor } from './waiter.js';

const SCOPE = { name: '@gym/http-pool' } as const;
const reporter = createReporter('@gym/http-pool');

/** The diagnostics_channel undici publishes when a connection takes a request. */
const REQUEST_CREATE_CHANNEL = 'undici:request:create';

/** Options of {@link startHttpPoolTelemetry}. */
export interface HttpPoolTelemetryOptions {
  /** Record on a meter of this provider. Absent: the global provider, while exporting. */
  readonly meterProvider?: MeterProvider | null | undefined;
  /**
   * Origin (`http://judge.internal:8000`) → the destination's bounded name (`judge`), matching
   * `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`. Every origin not listed is `external`.
   */
  readonly destinations?: Readonly<Record<string, string>>;
}

/** undici's `dispatch(options, handler)`. */
export type DispatchFunction = (options: object, handler: object) => boolean;

/** What `observe` needs of a pool: undici's `Pool`, 6.x or newer. */
export interface ObservablePool {
  readonly stats: { readonly queued: number };
  dispatch(...args: never[]): boolean;
}

/** A running connection-pool telemetry. */
export interface HttpPoolTelemetry {
  /**
   * The dispatcher to use instead of `pool` (for `pool.request`-style calls, or as `fetch`'s
   * `dispatcher`): the same pool, with the waits of its queued requests recorded under the
   * name of `origin`. The pool itself when nothing exports. Send every request of the pool
   * through it; requests sent to `pool` directly are still served in order but not timed.
   */
  observe<P extends ObservablePool>(pool: P, origin: string | URL): P;
  /** Stops counting and unsubscribes. Dispatchers already observed stop recording. Idempotent. */
  stop(): void;
}

const INERT: HttpPoolTelemetry = Object.freeze({
  observe<P extends ObservablePool>(pool: P, origin: string | URL): P {
    originOf(origin, 'observe: origin');
    return pool;
  },
  stop: () => {},
});

/**
 * Starts connection-pool telemetry: `gym.http.connection_pool.connect_total` for every undici
 * request in the process (npm undici and Node's fetch), and `queue_duration_ms` for the pools
 * given to `observe`. Call it once, after telemetry is set up: when nothing exports at that
 * moment it returns an inert handle that subscribes to nothing. Invalid `destinations` throw a
 * `RangeError` at once; telemetry trouble never throws.
 */
export function startHttpPoolTelemetry(options: HttpPoolTelemetryOptions = {}): HttpPoolTelemetry {
  const names = destinationNames(options.destinations);
  const meter = resolveMeter(options, SCOPE, reporter);
  if (meter === undefined) return INERT;
  // One attribute set per destination name, built once; connect_total counts by it.
  const byName = new Map<string, Attributes>();
  for (const name of [HTTP_DESTINATION_EXTERNAL, ...names.values()]) {
    byName.set(name, Object.freeze({ [ATTR_HTTP_DESTINATION_SERVER_NAME]: name }));
  }
  const counts = new Map<Attributes, number>();
  const observeCounts = (result: ObservableResult) => {
    for (const [attributes, count] of counts) result.observe(count, attributes);
  };
  const onCreate = (message: unknown) => {
    const origin = (message as { request?: { origin?: unknown } } | null)?.request?.origin;
    const attributes = byName.get((typeof origin === 'string' && names.get(origin)) || HTTP_DESTINATION_EXTERNAL)!;
    counts.set(attributes, (counts.get(attributes) ?? 0) + 1);
  };
  let histogram: Histogram;
  let counter: ObservableCounter;
  try {
    histogram = createInstrument(meter, INSTRUMENTS.httpPoolQueueDuration);
    counter = createInstrument(meter, INSTRUMENTS.httpPoolConnectTotal);
    counter.addCallback(observeCounts);
  } catch (error) {
    reporter.warnOnce('instruments', 'creating the connection-pool instruments failed; nothing is recorded', error);
    return INERT;
  }
  subscribe(REQUEST_CREATE_CHANNEL, onCreate);
  let stopped = false;

  /** The pool's own dispatch, timing the requests `pool` queues under `name`. */
  function timedDispatch(pool: ObservablePool, name: string): DispatchFunction {
    const dispatch = pool.dispatch as unknown as DispatchFunction;
    const ok = queueAttributes(name, 'ok');
    const abandoned = queueAttributes(name, 'abandoned');
    const record = (queuedAt: number, gotConnection: boolean) => {
      if (stopped) return;
      try {
        histogram.record(performance.now() - queuedAt, gotConnection ? ok : abandoned);
      } catch (error) {
        reporter.warnOnce('record', 'recording a connection-pool wait failed; the request is unaffected', error);
      }
    };
    return (options, handler) => {
      if (stopped) return dispatch.call(pool, options, handler);
      const waiter = waiterFor(handler, record);
      const accepted = dispatch.call(pool, options, waiter);
      // Did the pool queue this request? Not when undici already started (or ended) it, nor
      // when the pool said it has room for more (queueing makes dispatch return false).
      // Otherwise the request sits in the pool's queue exactly when the queue is not empty:
      // while requests wait, every connection is busy, so a new request joins them at the
      // end. The common case (a free connection) reads no stats and no clock.
      if (!waiter.left && !accepted && pool.stats.queued > 0) waiter.queue(performance.now());
      return accepted;
    };
  }

  return {
    observe(pool, origin) {
      const dispatch = timedDispatch(pool, names.get(originOf(origin, 'observe: origin')) ?? HTTP_DESTINATION_EXTERNAL);
      // What undici's own `compose` returns: the pool, with only `dispatch` replaced. (Not
      // `compose` itself: undici 7 converts every handler on that path, which costs a local
      // request about 10%.)
      return new Proxy(pool, { get: (target, key) => (key === 'dispatch' ? dispatch : Reflect.get(target, key)) });
    },
    stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe(REQUEST_CREATE_CHANNEL, onCreate);
      try {
        counter.removeCallback(observeCounts);
      } catch (error) {
        reporter.warnOnce('stop', 'removing the connect_total callback failed', error);
      }
    },
  };
}

function queueAttributes(name: string, outcome: HttpPoolQueueOutcome): Attributes {
  // undici's Pool caps connections per origin: the only limit that can make one of its requests wait.
  return Object.freeze({
    [ATTR_HTTP_POOL_QUEUE_CONSTRAINT]: 'per_host',
    [ATTR_HTTP_POOL_QUEUE_OUTCOME]: outcome,
    [ATTR_HTTP_DESTINATION_SERVER_NAME]: name,
  });
}

/** The origin of `value` as undici writes it (`http://host:port`, default port left out). */
function originOf(value: string | URL, what: string): string {
  let origin = '';
  try {
    origin = new URL(value).origin;
  } catch {
    // Not a URL: refused below.
  }
  if (!/^https?:\/\//.test(origin)) {
    throw invalidChoice(`startHttpPoolTelemetry: ${what}`, value, 'an http(s) origin such as http://127.0.0.1:8000');
  }
  return origin;
}

function destinationNames(destinations: Readonly<Record<string, string>> = {}): ReadonlyMap<string, string> {
  const names = new Map<string, string>();
  for (const [key, name] of Object.entries(destinations)) {
    if (!SERVER_NAME_PATTERN.test(name)) {
      throw invalidChoice(
        `startHttpPoolTelemetry: destinations[${JSON.stringify(key)}]`,
        name,
        `a name matching ${SERVER_NAME_PATTERN}`,
      );
    }
    names.set(originOf(key, 'a destinations key'), name);
  }
  return names;
}
