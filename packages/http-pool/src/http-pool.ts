// Connection-pool telemetry for undici and fetch, under Gym's `gym.http.connection_pool.*`
// names. Two sources, both undici's own public surfaces, nothing patched:
//
// - `connect_total` counts undici's `undici:request:create` diagnostics_channel event. Channels
//   are global by name, so the npm undici and the undici inside Node's fetch are both seen.
//   undici creates the request when a connection takes it; a request that waited in a Pool's
//   queue is counted when it leaves the queue.
// - `queue_duration_ms` needs the moment a request entered the pool, and no channel event
//   marks it: a Pool keeps a waiting request as `{ opts, handler }` and publishes nothing until
//   a connection takes it. So `observe(pool)` composes one undici interceptor onto the pool:
//   it reads `pool.stats.queued` around the pool's own dispatch (it grew by one exactly when
//   the pool queued this request) and ends the wait when undici starts the request on a
//   connection. Requests that did not queue get no point.
//
// Off is free: when nothing exports, nothing subscribes to any channel and `observe` returns
// the pool itself.

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  ATTR_HTTP_DESTINATION_SERVER_NAME,
  ATTR_HTTP_POOL_QUEUE_CONSTRAINT,
  ATTR_HTTP_POOL_QUEUE_OUTCOME,
  HTTP_DESTINATION_EXTERNAL,
  HTTP_POOL_QUEUE_DURATION_BOUNDARIES_MS,
  type HttpPoolQueueOutcome,
  METRIC_HTTP_POOL_CONNECT_TOTAL,
  METRIC_HTTP_POOL_QUEUE_DURATION,
  SERVER_NAME_PATTERN,
  UNIT_CONNECTION,
} from '@gym/constants';
import { createReporter, invalidChoice, type MeterSourceOptions, resolveMeter } from '@gym/core';
import { type Attributes, type Histogram, type ObservableResult, ValueType } from '@opentelemetry/api';
import { waiterFor } from './waiter.js';

const SCOPE = { name: '@gym/http-pool' } as const;
const reporter = createReporter('@gym/http-pool');

/** The diagnostics_channel undici publishes when a connection takes a request. */
const REQUEST_CREATE_CHANNEL = 'undici:request:create';

/** Options of {@link startHttpPoolTelemetry}. */
export interface HttpPoolTelemetryOptions extends MeterSourceOptions {
  /**
   * Origin (`http://judge.internal:8000`) → the destination's bounded name (`judge`), matching
   * `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`. Every origin not listed is `external`.
   */
  readonly destinations?: Readonly<Record<string, string>>;
}

/** A dispatch function as an undici interceptor sees it. */
export type DispatchFunction = (options: object, handler: object) => boolean;

/**
 * What `observe` needs of a pool: undici's `Pool` (or `BalancedPool`), 6.x or newer. `compose`
 * is undici's own, called with one interceptor of type `(dispatch: DispatchFunction) =>
 * DispatchFunction` (declared loosely so that every undici version's typings fit).
 */
export interface ObservablePool {
  readonly stats: { readonly queued: number };
  compose(...interceptors: never[]): unknown;
}

/** A running connection-pool telemetry. */
export interface HttpPoolTelemetry {
  /**
   * The dispatcher to use instead of `pool` (for `pool.request`-style calls, or as `fetch`'s
   * `dispatcher`): the same pool, with the waits of its queued requests recorded under the
   * name of `origin`. The pool itself when nothing exports. Send every request of the pool
   * through it; requests sent to `pool` directly are still served in order but not timed.
   */
  observe<P extends ObservablePool>(pool: P, origin: string | URL): P | ReturnType<P['compose']>;
  /** Stops counting and unsubscribes. Dispatchers already observed stop recording. Idempotent. */
  stop(): void;
}

interface Recorder {
  readonly histogram: Histogram;
  stopped: boolean;
}

const INERT: HttpPoolTelemetry = Object.freeze({
  observe: <P extends ObservablePool>(pool: P) => pool,
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
  let recorder: Recorder;
  const counts = new Map<string, number>();
  const observeCounts = (result: ObservableResult) => {
    for (const [name, count] of counts) result.observe(count, destinationAttributes(name));
  };
  const onCreate = (message: unknown) => {
    const origin = (message as { request?: { origin?: unknown } } | null)?.request?.origin;
    const name = (typeof origin === 'string' && names.get(origin)) || HTTP_DESTINATION_EXTERNAL;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  };
  let removeCallback = () => {};
  try {
    recorder = {
      histogram: meter.createHistogram(METRIC_HTTP_POOL_QUEUE_DURATION, {
        description: 'Time one queued connection acquisition waited for a pool slot.',
        unit: 'ms',
        advice: { explicitBucketBoundaries: [...HTTP_POOL_QUEUE_DURATION_BOUNDARIES_MS] },
      }),
      stopped: false,
    };
    const counter = meter.createObservableCounter(METRIC_HTTP_POOL_CONNECT_TOTAL, {
      description:
        'Outgoing requests that asked a connection pool for a connection, including ones that later failed or were abandoned.',
      unit: UNIT_CONNECTION,
      valueType: ValueType.INT,
    });
    counter.addCallback(observeCounts);
    removeCallback = () => counter.removeCallback(observeCounts);
  } catch (error) {
    reporter.warnOnce('instruments', 'creating the connection-pool instruments failed; nothing is recorded', error);
    return INERT;
  }
  subscribe(REQUEST_CREATE_CHANNEL, onCreate);
  return {
    observe(pool, origin) {
      const name = names.get(originOf(origin, 'observe: origin')) ?? HTTP_DESTINATION_EXTERNAL;
      const interceptor = queueInterceptor(pool, recorder, name);
      return pool.compose(interceptor as never) as ReturnType<(typeof pool)['compose']>;
    },
    stop() {
      if (recorder.stopped) return;
      recorder.stopped = true;
      unsubscribe(REQUEST_CREATE_CHANNEL, onCreate);
      try {
        removeCallback();
      } catch (error) {
        reporter.warnOnce('stop', 'removing the connect_total callback failed', error);
      }
    },
  };
}

/** The interceptor that times the queued requests of `pool` under `name`. */
function queueInterceptor(
  pool: ObservablePool,
  recorder: Recorder,
  name: string,
): (dispatch: DispatchFunction) => DispatchFunction {
  const ok = queueAttributes(name, 'ok');
  const abandoned = queueAttributes(name, 'abandoned');
  const record = (started: number, gotConnection: boolean) => {
    if (recorder.stopped) return;
    try {
      recorder.histogram.record(performance.now() - started, gotConnection ? ok : abandoned);
    } catch (error) {
      reporter.warnOnce('record', 'recording a connection-pool wait failed; the request is unaffected', error);
    }
  };
  return (dispatch) => (options, handler) => {
    if (recorder.stopped) return dispatch(options, handler);
    let before: number;
    try {
      before = pool.stats.queued;
    } catch (error) {
      reporter.warnOnce('stats', "reading the pool's stats failed; this request is not timed", error);
      return dispatch(options, handler);
    }
    const waiter = waiterFor(handler, performance.now(), record);
    const accepted = dispatch(options, waiter);
    try {
      // The pool queued this request exactly when its queue grew during its own dispatch.
      if (pool.stats.queued > before) waiter.queued = true;
    } catch (error) {
      reporter.warnOnce('stats', "reading the pool's stats failed; this request is not timed", error);
    }
    return accepted;
  };
}

const destinationAttributeSets = new Map<string, Attributes>();

function destinationAttributes(name: string): Attributes {
  let attributes = destinationAttributeSets.get(name);
  if (attributes === undefined) {
    attributes = Object.freeze({ [ATTR_HTTP_DESTINATION_SERVER_NAME]: name });
    destinationAttributeSets.set(name, attributes);
  }
  return attributes;
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
function originOf(value: unknown, what: string): string {
  let origin: string | undefined;
  try {
    origin = typeof value === 'string' || value instanceof URL ? new URL(value).origin : undefined;
  } catch {
    origin = undefined;
  }
  if (origin === undefined || !/^https?:\/\//.test(origin)) {
    throw invalidChoice(`startHttpPoolTelemetry: ${what}`, value, 'an http(s) origin such as http://127.0.0.1:8000');
  }
  return origin;
}

function destinationNames(destinations: Readonly<Record<string, string>> | undefined): ReadonlyMap<string, string> {
  const names = new Map<string, string>();
  if (destinations === undefined) return names;
  if (typeof destinations !== 'object' || destinations === null) {
    throw invalidChoice('startHttpPoolTelemetry: destinations', destinations, 'an object of origin → name');
  }
  for (const [key, name] of Object.entries(destinations)) {
    if (typeof name !== 'string' || !SERVER_NAME_PATTERN.test(name)) {
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
