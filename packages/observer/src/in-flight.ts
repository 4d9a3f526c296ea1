// `gym.server.requests.in_flight`: every request from arrival to response end or client
// abort. +1 when the server emits 'request' (our listener is prepended, so it runs before the
// application's handler); −1 exactly once, at the response's 'finish' (fully handed to the OS)
// or 'close' (the connection went away first), whichever comes first. The request's own
// 'close' is not used: since Node 16 it fires as soon as the body was read, long before a
// slow response ends. A request that was never counted is never subtracted, so the series
// never goes below zero.
//
// Off is free: with nothing exporting, the listener does one global read and returns; no
// meter lookup, no listeners on the response, no allocation.
//
// Requests with an `Expect` header reach the application through 'checkContinue' or
// 'checkExpectation' instead of 'request' when the application listens to those events (without
// a listener Node answers them itself: 100 Continue then 'request', or 417). Our listener joins
// those two events only while the application has one of its own there, because a listener of
// ours alone would change what Node does with such a request. A response is counted once even
// when the application's handler re-emits it as a 'request'.

import { ATTR_SERVER_NAME, INSTRUMENTS } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { createInstrument, type MeterSourceOptions, perMeter, resolveMeter, sharedSlot } from '@gym/core/internal';
import type { Attributes, Meter, UpDownCounter } from '@opentelemetry/api';
import { reporter, SCOPE } from './scope.js';
import type { RequestEmitter, TrackInFlightOptions, Untrack } from './types.js';
import { serverNameOf } from './validate.js';

const NO_ATTRIBUTES: Attributes = Object.freeze({});
/** One tracker per server, shared by every copy of this package: tracking twice must not count twice. */
const tracked = sharedSlot('@gym/observer/tracked-servers@1', () => new WeakMap<object, Untrack>());
/** Responses already counted (a checkContinue handler may re-emit its request as 'request'). */
const counted = new WeakSet<object>();

/** The events through which Node hands a request with an `Expect` header to the application. */
const EXPECT_EVENTS: readonly string[] = ['checkContinue', 'checkExpectation'];

/** What following the Expect events needs of a server beyond {@link RequestEmitter}. */
interface ListenerCounting {
  listenerCount(event: string): number;
  on(event: string, listener: (...args: never[]) => void): unknown;
  prependListener(event: string, listener: (...args: never[]) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
}

function countsListeners(server: RequestEmitter): server is RequestEmitter & ListenerCounting {
  const v = server as unknown as Partial<ListenerCounting>;
  return typeof v.listenerCount === 'function' && typeof v.on === 'function';
}

/** Joins `onRequest` to 'checkContinue' and 'checkExpectation' while the application listens there; returns what undoes it. */
function followExpectEvents(
  server: RequestEmitter & ListenerCounting,
  onRequest: (request: unknown, response: unknown) => void,
): () => void {
  const joined = new Set<string>();
  const join = (event: string): void => {
    if (joined.has(event)) return;
    joined.add(event);
    server.prependListener(event, onRequest);
  };
  const leave = (event: string): void => {
    if (!joined.delete(event)) return;
    server.removeListener(event, onRequest);
  };
  // 'newListener' fires before the application's listener is added: ours goes first.
  const onNew = (event: string, listener: unknown): void => {
    if (listener !== onRequest && EXPECT_EVENTS.includes(event)) join(event);
  };
  // 'removeListener' fires after the removal: when only ours is left, Node must answer alone again.
  const onRemoved = (event: string, listener: unknown): void => {
    if (listener !== onRequest && joined.has(event) && server.listenerCount(event) <= 1) leave(event);
  };
  server.on('newListener', onNew);
  server.on('removeListener', onRemoved);
  for (const event of EXPECT_EVENTS) if (server.listenerCount(event) > 0) join(event);
  return () => {
    server.removeListener('newListener', onNew);
    server.removeListener('removeListener', onRemoved);
    for (const event of EXPECT_EVENTS) leave(event);
  };
}

/** The in-flight counter of `meter`, created once. May throw (a broken meter): callers catch. */
export const inFlightCounter: (meter: Meter) => UpDownCounter = perMeter((meter) =>
  createInstrument(meter, INSTRUMENTS.requestsInFlight),
);

/** The attribute set of a server name, built once. */
export function inFlightAttributes(serverName: string | undefined): Attributes {
  return serverName === undefined ? NO_ATTRIBUTES : Object.freeze({ [ATTR_SERVER_NAME]: serverName });
}

interface ResponseLike {
  readonly writableFinished?: boolean;
  readonly destroyed?: boolean;
  once(event: string, listener: () => void): unknown;
  removeListener(event: string, listener: () => void): unknown;
}

/**
 * Counts the requests of a `node:http` (or `node:https`) server in `gym.server.requests.in_flight`,
 * with `nemo.gym.server.name` when `serverName` is given. Returns a function that stops counting
 * new requests (those already counted still end their count). Tracking the same server again
 * returns the first tracker's function and counts nothing twice. A bad `serverName` throws a
 * `RangeError` at once; telemetry trouble never throws.
 */
export function trackInFlight(server: RequestEmitter, options?: TrackInFlightOptions): Untrack {
  const attributes = inFlightAttributes(serverNameOf('trackInFlight: options.serverName', options?.serverName));
  const existing = tracked.get(server);
  if (existing !== undefined) return existing;

  const source: MeterSourceOptions = { meterProvider: options?.meterProvider };
  const injected = source.meterProvider != null;
  const onRequest = (_request: unknown, response: unknown): void => {
    if (!injected && !isMetricsExporting()) return;
    count(response as ResponseLike, source, attributes);
  };
  let active = true;
  let unfollow = (): void => {};
  const untrack: Untrack = () => {
    if (!active) return;
    active = false;
    tracked.delete(server);
    server.removeListener('request', onRequest);
    unfollow();
  };
  server.prependListener('request', onRequest);
  if (countsListeners(server)) unfollow = followExpectEvents(server, onRequest);
  tracked.set(server, untrack);
  return untrack;
}

function count(response: ResponseLike, source: MeterSourceOptions, attributes: Attributes): void {
  let counter: UpDownCounter;
  try {
    const meter = resolveMeter(source, SCOPE, reporter);
    if (meter === undefined) return;
    counter = inFlightCounter(meter);
    // Already over before we saw it (another prepended listener ended it): nothing to count.
    if (response.writableFinished === true || response.destroyed === true) return;
    // Seen through 'checkContinue' and then again as a 'request' re-emitted by the handler.
    if (counted.has(response)) return;
    counted.add(response);
    counter.add(1, attributes);
  } catch (error) {
    reporter.warnOnce('in-flight', 'counting a request in flight failed; this request is not counted', error);
    return;
  }
  let open = true;
  const end = (): void => {
    if (!open) return;
    open = false;
    response.removeListener('finish', end);
    response.removeListener('close', end);
    try {
      counter.add(-1, attributes);
    } catch (error) {
      reporter.warnOnce('in-flight', 'counting a request in flight failed; this request is not counted', error);
    }
  };
  response.once('finish', end);
  response.once('close', end);
}
