// `gym.server.requests.in_flight`: +1 when the server emits 'request' (our listener is prepended,
// so it runs before the application's), −1 once, at the response's 'finish' or 'close', whichever
// comes first (the request's own 'close' fires once its body was read, long before a slow response
// ends). Requests with an `Expect` header reach the application through 'checkContinue' or
// 'checkExpectation' only when it listens there (else Node answers them itself): our listener
// joins those events only while the application has a listener of its own there.

import type { ServerResponse } from 'node:http';
import { ATTR_SERVER_NAME, INSTRUMENTS, SERVER_NAME_PATTERN } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { createInstrument, invalidChoice, perMeter, resolveMeter, sharedSlot } from '@gym/core/internal';
import type { Attributes } from '@opentelemetry/api';
import { NO_ATTRIBUTES, reporter, SCOPE } from './scope.js';
import type { RequestEmitter, TrackInFlightOptions, Untrack } from './types.js';

type OnRequest = (request: unknown, response: ServerResponse) => void;

/** One tracker per server, shared by every copy of this package: tracking twice must not count twice. */
const tracked = sharedSlot('@gym/observer/tracked-servers@1', () => new WeakMap<object, Untrack>());
const counted = new WeakSet<ServerResponse>();
const EXPECT_EVENTS: readonly string[] = ['checkContinue', 'checkExpectation'];

const SERVER_NAME_RULE = `a string matching ${SERVER_NAME_PATTERN} (1 to 128 of A-Z a-z 0-9 _ . -)`;

/** `serverName`, checked against SERVER_NAME_PATTERN: a bad one throws a `RangeError` naming it. */
export function checkServerName(what: string, serverName: string): string {
  if (!SERVER_NAME_PATTERN.test(serverName)) throw invalidChoice(what, serverName, SERVER_NAME_RULE);
  return serverName;
}

/** The attribute set of an optional server name, checked and built once. */
export function inFlightAttributes(what: string, serverName: string | undefined): Attributes {
  return serverName === undefined
    ? NO_ATTRIBUTES
    : Object.freeze({ [ATTR_SERVER_NAME]: checkServerName(what, serverName) });
}

/** The in-flight counter of `meter`, created once. May throw (a broken meter): callers catch. */
export const inFlightCounter = perMeter((meter) => createInstrument(meter, INSTRUMENTS.requestsInFlight));

/** Joins `onRequest` to the Expect events while the application listens there; returns what undoes it. */
function followExpectEvents(server: RequestEmitter, onRequest: OnRequest): () => void {
  const joined = new Set<string>();
  // 'newListener' fires before the application's listener is added: ours goes first.
  const onNew = (event: string, listener: unknown): void => {
    if (listener === onRequest || !EXPECT_EVENTS.includes(event) || joined.has(event)) return;
    joined.add(event);
    server.prependListener(event, onRequest);
  };
  const leave = (event: string): void => {
    if (joined.delete(event)) server.removeListener(event, onRequest);
  };
  // 'removeListener' fires after the removal: when only ours is left, Node must answer alone again.
  const onRemoved = (event: string, listener: unknown): void => {
    if (listener !== onRequest && joined.has(event) && server.listenerCount(event) <= 1) leave(event);
  };
  server.on('newListener', onNew);
  server.on('removeListener', onRemoved);
  for (const event of EXPECT_EVENTS) if (server.listenerCount(event) > 0) onNew(event, undefined);
  return () => {
    server.removeListener('newListener', onNew);
    server.removeListener('removeListener', onRemoved);
    for (const event of joined) leave(event);
  };
}

/**
 * Counts the requests of a `node:http` (or `node:https`) server in `gym.server.requests.in_flight`.
 * Tracking the same server again returns the first tracker's `untrack` and counts nothing twice.
 * A bad `serverName` throws a `RangeError` at once; telemetry trouble never throws.
 */
export function trackInFlight(server: RequestEmitter, options?: TrackInFlightOptions): Untrack {
  const attributes = inFlightAttributes('trackInFlight: options.serverName', options?.serverName);
  const existing = tracked.get(server);
  if (existing !== undefined) return existing;
  const source: TrackInFlightOptions = { meterProvider: options?.meterProvider };
  const injected = source.meterProvider != null;
  const onRequest: OnRequest = (_request, response) => {
    if (injected || isMetricsExporting()) count(response, source, attributes);
  };
  server.prependListener('request', onRequest);
  const unfollow = followExpectEvents(server, onRequest);
  const untrack: Untrack = () => {
    if (tracked.get(server) !== untrack) return;
    tracked.delete(server);
    server.removeListener('request', onRequest);
    unfollow();
  };
  tracked.set(server, untrack);
  return untrack;
}

const failed = (error: unknown): void =>
  reporter.warnOnce('in-flight', 'counting a request in flight failed; this request is not counted', error);

function count(response: ServerResponse, source: TrackInFlightOptions, attributes: Attributes): void {
  try {
    const meter = resolveMeter(source, SCOPE, reporter);
    // Over before we saw it (another prepended listener ended it), or counted already through
    // 'checkContinue' and then re-emitted as a 'request' by the handler.
    if (meter === undefined || response.writableFinished || response.destroyed || counted.has(response)) return;
    const counter = inFlightCounter(meter);
    counted.add(response);
    counter.add(1, attributes);
    const end = (): void => {
      response.removeListener('finish', end);
      response.removeListener('close', end);
      try {
        counter.add(-1, attributes);
      } catch (error) {
        failed(error);
      }
    };
    response.once('finish', end);
    response.once('close', end);
  } catch (error) {
    failed(error);
  }
}
