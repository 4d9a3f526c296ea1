// Connection-pool telemetry for undici and fetch, under Gym's `gym.http.connection_pool.*`
// names. Two sources, both undici's own public surfaces, nothing patched:
//
// - `connect_total` counts undici's `undici:request:create` diagnostics_channel event. Channels
//   are global by name, so the npm undici and the undici inside Node's fetch are both seen.
//   undici creates the request when a connection takes it; a request that waited in a Pool's
//   queue is counted when it leaves the queue.
// - `queue_duration_ms` needs the moment a request entered the pool, and no channel event
//   marks it. So `observe(pool)` returns the pool with its `dispatch` wrapped, the way undici's
//   own `compose` does it. A wait is defined here, from public counts only: a request waits
//   when, once the pool holds it, the requests it holds (`stats.size`: queued or on a
//   connection, each occupying one) outnumber the pool's `connections`; the wait ends when
//   undici starts the request on a connection, when undici ends it first, or when the caller's
//   `signal` aborts, whichever comes first. undici's own queue is not the truth: a Pool also
//   parks a request for a tick when an idle connection still carries its need-drain flag, and
//   that request found a free connection.
//
// Off is free: when nothing exports, nothing subscribes to any channel and `observe` returns
// the pool itself.

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT,
  ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME,
  ATTR_HTTP_DESTINATION_SERVER_NAME,
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
  readonly stats: { readonly queued: number; readonly size: number };
  dispatch(...args: never[]): boolean;
}

/** What `observe` needs of a single connection: undici's `Client`, 7.x or newer (6.x has no `stats`). */
export interface ObservableClient {
  readonly stats: { readonly size: number; readonly queued?: never };
  readonly pipelining: number;
  dispatch(...args: never[]): boolean;
}

/** The limit of an observed `Pool`: the `connections` it was made with. */
export interface PoolLimit {
  /**
   * The pool's `connections` option, a positive integer (times its `pipelining`, if you set
   * that above 1): how many requests it runs at once. undici does not expose it.
   */
  readonly connections: number;
}

/** A running connection-pool telemetry. */
export interface HttpPoolTelemetry {
  /**
   * The dispatcher to use instead of `pool` (for `pool.request`-style calls, or as `fetch`'s
   * `dispatcher`): the same pool, with the waits of its requests recorded under the name of
   * `origin`. A request waits when, at dispatch, all `limit.connections` connections hold a
   * request. The pool itself when nothing exports. Send every request of the pool through it;
   * requests sent to `pool` directly are served as always but not timed.
   */
  observe<P extends ObservablePool>(pool: P, origin: string | URL, limit: PoolLimit): P;
  /**
   * The same for one undici `Client` (7.x): a request waits when, at dispatch, the client
   * already holds as many requests as its `pipelining` (1 by default).
   */
  observe<C extends ObservableClient>(client: C, origin: string | URL): C;
  /** Stops counting and unsubscribes. Dispatchers already observed stop recording. Idempotent. */
  stop(): void;
}

/** Checks `observe`'s arguments (a programming error throws at once, on or off). */
function checked(dispatcher: ObservablePool | ObservableClient, origin: string | URL, limit?: PoolLimit) {
  const originName = originOf(origin, 'observe: origin');
  const stats = (dispatcher as { stats?: { size?: unknown; queued?: unknown } }).stats;
  if (typeof stats?.size !== 'number') {
    throw invalidChoice(
      'startHttpPoolTelemetry: observe: dispatcher',
      dispatcher,
      'an undici Pool (6.x or newer) or Client (7.x or newer), which count their requests in `stats`',
    );
  }
  const isPool = typeof stats.queued === 'number';
  const connections = limit?.connections;
  if (isPool && !(Number.isSafeInteger(connections) && connections! > 0)) {
    throw invalidChoice(
      'startHttpPoolTelemetry: observe: limit.connections',
      connections,
      "the Pool's `connections`, a positive integer",
    );
  }
  return { originName, connections: isPool ? connections! : 0 };
}

const INERT: HttpPoolTelemetry = Object.freeze({
  observe<P extends ObservablePool | ObservableClient>(pool: P, origin: string | URL, limit?: PoolLimit): P {
    checked(pool, origin, limit);
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

  /**
   * The dispatcher's own dispatch, timing the waits of its requests under `name`. `connections`
   * is a Pool's limit; 0 for a Client, whose limit is its `pipelining`.
   */
  function timedDispatch(dispatcher: ObservablePool | ObservableClient, name: string, connections: number) {
    const dispatch = dispatcher.dispatch as unknown as DispatchFunction;
    const ok = queueAttributes(name, 'ok');
    const abandoned = queueAttributes(name, 'abandoned');
    const record = (waitedMs: number, gotConnection: boolean) => {
      if (stopped) return;
      try {
        histogram.record(waitedMs, gotConnection ? ok : abandoned);
      } catch (error) {
        reporter.warnOnce('record', 'recording a connection-pool wait failed; the request is unaffected', error);
      }
    };
    const client = dispatcher as ObservableClient;
    return (options: object, handler: object): boolean => {
      if (stopped) return dispatch.call(dispatcher, options, handler);
      const waiter = waiterFor(handler);
      const accepted = dispatch.call(dispatcher, options, waiter);
      // Did the request find every connection busy? Not when undici already started (or
      // ended) it, nor when the pool said it still has room after taking it (then it took a
      // free connection). Otherwise count: every request the pool holds (queued, or on a
      // connection) occupies one connection until it ends, so this one, now among them, waits
      // exactly when they outnumber the connections. undici's own queue is not the answer: a
      // Pool also parks a request for a tick behind an idle connection's stale need-drain flag.
      if (!accepted && !waiter.left && dispatcher.stats.size > (connections || client.pipelining || 1)) {
        waiter.wait(record, (options as { signal?: unknown }).signal);
      }
      return accepted;
    };
  }

  return {
    observe(pool: ObservablePool | ObservableClient, origin: string | URL, limit?: PoolLimit) {
      const { originName, connections } = checked(pool, origin, limit);
      const dispatch = timedDispatch(pool, names.get(originName) ?? HTTP_DESTINATION_EXTERNAL, connections);
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
  } as HttpPoolTelemetry;
}

function queueAttributes(name: string, outcome: HttpPoolQueueOutcome): Attributes {
  // undici's Pool caps connections per origin: the only limit that can make one of its requests wait.
  return Object.freeze({
    [ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT]: 'per_host',
    [ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME]: outcome,
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
