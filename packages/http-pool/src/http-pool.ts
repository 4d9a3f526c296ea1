// Connection-pool telemetry for undici and fetch, from undici's public surfaces only:
// - `connect_total` counts the `undici:request:create` diagnostics_channel event, published
//   when a connection takes a request by every undici in the process (npm's and Node's fetch).
// - `queue_duration_ms`: no event marks a request entering a pool, so `observe(pool)` wraps the
//   pool's `dispatch`, as undici's own `compose` does. A request waits when, once the pool holds
//   it, the requests it holds (`stats.size`) outnumber its `connections`; the wait ends when the
//   request starts, when undici ends it, or when the caller's `signal` aborts. undici's own
//   queue is not the truth: a Pool parks a request for a tick behind an idle connection's stale
//   need-drain flag, and that request found a free connection.

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
  /** The pool's `connections` (times its `pipelining`, if above 1). undici does not expose it. */
  readonly connections: number;
}

/** A running connection-pool telemetry. */
export interface HttpPoolTelemetry {
  /**
   * The same pool, to use instead of it (also as `fetch`'s `dispatcher`), with the waits of its
   * requests recorded under the name of `origin`: a request waits when, at dispatch, all
   * `limit.connections` connections hold a request. The pool itself when nothing exports.
   */
  observe<P extends ObservablePool>(pool: P, origin: string | URL, limit: PoolLimit): P;
  /** The same for an undici 7 `Client`, whose limit is its `pipelining` (1 by default). */
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
 * Starts `connect_total` for every undici request in the process and `queue_duration_ms` for the
 * pools given to `observe`. Call it once, after telemetry is set up: when nothing exports then,
 * it returns an inert handle that subscribes to nothing. Invalid `destinations` throw at once.
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

  /** The dispatcher's dispatch, timing waits under `name`; `connections` 0: a Client's `pipelining`. */
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
      // A request undici started (or ended) at once, or after which the pool still has room,
      // took a free connection. Otherwise each request the pool holds occupies a connection.
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
      // What undici's `compose` returns (without its handler conversion): only `dispatch` replaced.
      return new Proxy(pool, { get: (target, key) => (key === 'dispatch' ? dispatch : Reflect.get(target, key)) });
    },
    stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe(REQUEST_CREATE_CHANNEL, onCreate);
      counter.removeCallback(observeCounts);
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
  const origin = URL.canParse(String(value)) ? new URL(value).origin : '';
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
