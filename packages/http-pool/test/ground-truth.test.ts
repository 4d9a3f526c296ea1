// The wait measured against a ground truth the test builds itself, never against undici's own
// queue: keep-alive pools and clients at their cap, where the number of requests in flight is
// set by the test (never more than connections: no request can wait; one more than
// connections: exactly that one waits), on undici 6 and 7, through `request`, undici's `fetch`
// and Node's `fetch`. And a wait that its caller gives up, timed to the moment it gave up.

import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT,
  ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME,
  ATTR_HTTP_DESTINATION_SERVER_NAME,
  INSTRUMENTS,
} from '@gym/constants';
import { startHttpPoolTelemetry } from '@gym/http-pool';
import {
  counterValue,
  createMetricHarness,
  histogramCount,
  histogramPoint,
  type MetricHarness,
  pointsOf,
  waitFor,
} from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import * as undici7 from 'undici';
import * as undici6 from 'undici6';
import { type HeldServer, startHeldServer } from './support/held-server.js';

type Undici = Pick<typeof undici7, 'Pool' | 'Client' | 'fetch'>;
const UNDICI: [string, Undici][] = [
  ['undici 7', undici7],
  ['undici 6', undici6 as unknown as Undici],
];
const ROUNDS = 50;

const waitPoint = (outcome: 'ok' | 'abandoned') => ({
  [ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT]: 'per_host',
  [ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME]: outcome,
  [ATTR_HTTP_DESTINATION_SERVER_NAME]: 'judge',
});
const judgeCalls = { [ATTR_HTTP_DESTINATION_SERVER_NAME]: 'judge' };

/** A keep-alive server that answers at once and keeps the truth: requests in flight, sockets. */
interface TruthServer {
  readonly origin: string;
  /** The most requests the server ever held at once: never more than the connections. */
  readonly maxInFlight: number;
  /** The connections the clients opened. */
  readonly sockets: number;
  close(): Promise<void>;
}

async function startTruthServer(): Promise<TruthServer> {
  let inFlight = 0;
  let maxInFlight = 0;
  let sockets = 0;
  const server: Server = createServer((_request, response) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    // Answer on the next turn, so that the requests of a round overlap at the server.
    setImmediate(() => {
      inFlight -= 1;
      response.end('ok');
    });
  });
  server.on('connection', () => {
    sockets += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get maxInFlight() {
      return maxInFlight;
    },
    get sockets() {
      return sockets;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(UNDICI)('%s', (name, undici) => {
  let harness: MetricHarness;
  let cleanups: (() => Promise<unknown> | unknown)[];

  beforeEach(() => {
    harness = createMetricHarness();
    cleanups = [];
  });

  afterEach(async () => {
    // A pool that a failed test left destroyed refuses a second destroy: that is not the finding.
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
    await harness.shutdown();
  });

  function start(origin: string) {
    const telemetry = startHttpPoolTelemetry({
      meterProvider: harness.meterProvider,
      destinations: { [origin]: 'judge' },
    });
    cleanups.push(() => telemetry.stop());
    return telemetry;
  }

  async function truthServer(): Promise<TruthServer> {
    const server = await startTruthServer();
    cleanups.push(() => server.close());
    return server;
  }

  async function heldServer(): Promise<HeldServer> {
    const server = await startHeldServer();
    cleanups.push(() => server.close());
    return server;
  }

  /** A keep-alive Pool of `connections`, observed. */
  function observedPool(origin: string, connections: number) {
    const pool = new undici.Pool(origin, { connections });
    cleanups.push(() => pool.destroy());
    return { pool, observed: start(origin).observe(pool, origin, { connections }) };
  }

  type Send = (dispatcher: undici7.Dispatcher, origin: string, signal?: AbortSignal) => Promise<string>;
  const SENDS: [string, Send][] = [
    [
      'request',
      async (dispatcher, origin, signal) => {
        const { body } = await dispatcher.request({ origin, method: 'GET', path: '/', signal });
        return body.text();
      },
    ],
    ['undici fetch', (dispatcher, origin) => undici.fetch(origin, { dispatcher }).then((r) => r.text())],
    [
      'Node fetch',
      (dispatcher, origin) => fetch(origin, { dispatcher } as unknown as RequestInit).then((r) => r.text()),
    ],
  ];

  /** `ROUNDS` rounds of `inFlight` concurrent requests, each round after the last one ended. */
  async function rounds(send: Send, dispatcher: undici7.Dispatcher, origin: string, inFlight: number) {
    for (let round = 0; round < ROUNDS; round += 1) {
      const answers = await Promise.all(Array.from({ length: inFlight }, () => send(dispatcher, origin)));
      expect(answers).toEqual(Array.from({ length: inFlight }, () => 'ok'));
    }
  }

  describe.each(SENDS)('through %s', (_send, send) => {
    it('no queue records no histogram sample: a keep-alive Pool of 2 at its cap, 50 rounds of exactly 2 requests', async () => {
      const server = await truthServer();
      const { observed } = observedPool(server.origin, 2);

      await rounds(send, observed as undici7.Dispatcher, server.origin, 2);

      expect(server.maxInFlight).toBeLessThanOrEqual(2);
      expect(server.sockets).toBe(2);
      const collected = await harness.collect();
      expect(pointsOf(collected, INSTRUMENTS.httpPoolQueueDuration.name)).toEqual([]);
      expect(counterValue(collected, INSTRUMENTS.httpPoolConnectTotal.name, judgeCalls)).toBe(2 * ROUNDS);
    });

    it('one request more than connections: exactly that one waits, every round', async () => {
      const server = await truthServer();
      const { observed } = observedPool(server.origin, 2);

      await rounds(send, observed as undici7.Dispatcher, server.origin, 3);

      expect(server.maxInFlight).toBeLessThanOrEqual(2);
      const collected = await harness.collect();
      expect(histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, waitPoint('ok')).count).toBe(ROUNDS);
      expect(pointsOf(collected, INSTRUMENTS.httpPoolQueueDuration.name)).toHaveLength(1);
      expect(counterValue(collected, INSTRUMENTS.httpPoolConnectTotal.name, judgeCalls)).toBe(3 * ROUNDS);
    });

    if (name === 'undici 7') {
      it('a keep-alive Client: one request at a time never waits, a second one at once does', async () => {
        const server = await truthServer();
        const client = new undici7.Client(server.origin);
        cleanups.push(() => client.destroy());
        const observed = start(server.origin).observe(client, server.origin);

        await rounds(send, observed as undici7.Dispatcher, server.origin, 1);
        expect(histogramCount(await harness.collect(), INSTRUMENTS.httpPoolQueueDuration.name)).toBe(0);
        await rounds(send, observed as undici7.Dispatcher, server.origin, 2);

        expect(server.maxInFlight).toBe(1);
        expect(server.sockets).toBe(1);
        const collected = await harness.collect();
        expect(histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, waitPoint('ok')).count).toBe(ROUNDS);
        expect(counterValue(collected, INSTRUMENTS.httpPoolConnectTotal.name, judgeCalls)).toBe(3 * ROUNDS);
      });
    }
  });

  it.each([
    ['an AbortSignal.timeout', () => AbortSignal.timeout(100)],
    ['an AbortController', () => new AbortController()],
  ])(
    'queued timeout and retry record separate attempts (%s): the given-up wait is timed to its abort',
    async (_how, make) => {
      const judge = await heldServer();
      const { pool, observed } = observedPool(judge.origin, 1);
      const send = SENDS[0]![1];
      // The holder keeps the one connection until the end of the test.
      // (Its error, if a failed assertion leaves it to the pool's destroy, is the test's to report.)
      const holder = send(observed as undici7.Dispatcher, judge.origin).catch((error: Error) => error.name);
      await waitFor('the holder to reach the server', () => judge.received.length === 1);

      const made = make();
      const signal = made instanceof AbortController ? made.signal : made;
      let abortedAt = 0;
      signal.addEventListener('abort', () => {
        abortedAt = performance.now();
      });
      const before = performance.now();
      const gaveUp = send(observed as undici7.Dispatcher, judge.origin, signal).then(
        () => 'served',
        (error: unknown) => (error as Error).name,
      );
      const after = performance.now();
      expect(pool.stats.queued).toBe(1);
      if (made instanceof AbortController) made.abort();
      await waitFor('the caller to give up', () => abortedAt > 0);
      const seen = performance.now();

      // The holder has not finished: the given-up wait is recorded already, and lasted from its
      // dispatch to its abort.
      let collected = await harness.collect();
      const abandoned = histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, waitPoint('abandoned'));
      expect(abandoned.count).toBe(1);
      expect(abandoned.sum).toBeGreaterThanOrEqual(abortedAt - after);
      expect(abandoned.sum).toBeLessThanOrEqual(seen - before);
      expect(pointsOf(collected, INSTRUMENTS.httpPoolQueueDuration.name)).toHaveLength(1);

      // The retry is its own attempt: it waits again, from its own dispatch, and gets the connection.
      const retry = send(observed as undici7.Dispatcher, judge.origin).catch((error: Error) => error.name);
      await waitFor('the retry to queue', () => pool.stats.queued === 2);
      judge.releaseAll();
      expect(await holder).toBe('/');
      expect(await retry).toBe('/');
      expect(await gaveUp).toBe(made instanceof AbortController ? 'AbortError' : 'TimeoutError');

      collected = await harness.collect();
      expect(histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, waitPoint('abandoned')).count).toBe(1);
      expect(histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, waitPoint('ok')).count).toBe(1);
      expect(judge.received).toEqual(['/', '/']);
    },
  );

  it('one signal shared by waiting requests: one abort gives every wait up, timed to it, with one listener of ours', async () => {
    const judge = await heldServer();
    const { pool, observed } = observedPool(judge.origin, 1);
    const send = SENDS[0]![1];
    const holder = send(observed as undici7.Dispatcher, judge.origin).catch((error: Error) => error.name);
    await waitFor('the holder to reach the server', () => judge.received.length === 1);

    // undici's own listeners on a shared signal, for requests sent past the observed pool.
    const direct = new AbortController();
    const unobserved = Array.from({ length: 5 }, () =>
      send(pool as unknown as undici7.Dispatcher, judge.origin, direct.signal).catch((error: Error) => error.name),
    );
    const undicis = getEventListeners(direct.signal, 'abort').length;
    const shared = new AbortController();
    const before = performance.now();
    const waiting = Array.from({ length: 5 }, () =>
      send(observed as undici7.Dispatcher, judge.origin, shared.signal).catch((error: Error) => error.name),
    );
    const after = performance.now();
    expect(pool.stats.queued).toBe(10);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(undicis + 1);

    const abortedAt = performance.now();
    shared.abort();
    const seen = performance.now();
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    const abandoned = histogramPoint(
      await harness.collect(),
      INSTRUMENTS.httpPoolQueueDuration.name,
      waitPoint('abandoned'),
    );
    expect(abandoned.count).toBe(5);
    expect(abandoned.sum).toBeGreaterThanOrEqual(5 * (abortedAt - after));
    expect(abandoned.sum).toBeLessThanOrEqual(5 * (seen - before));

    direct.abort();
    judge.releaseAll();
    expect(await holder).toBe('/');
    expect(await Promise.all([...waiting, ...unobserved])).toEqual(Array.from({ length: 10 }, () => 'AbortError'));
    const collected = await harness.collect();
    expect(histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, waitPoint('abandoned')).count).toBe(5);
    expect(pointsOf(collected, INSTRUMENTS.httpPoolQueueDuration.name)).toHaveLength(1);
  });

  it('a request given up before it was sent never waited for its caller: no point, even when undici queues it', async () => {
    const judge = await heldServer();
    const { pool, observed } = observedPool(judge.origin, 1);
    const send = SENDS[0]![1];
    const holder = send(observed as undici7.Dispatcher, judge.origin).catch((error: Error) => error.name);
    await waitFor('the holder to reach the server', () => judge.received.length === 1);

    const late = send(observed as undici7.Dispatcher, judge.origin, AbortSignal.abort()).catch(
      (error: Error) => error.name,
    );
    expect(pool.stats.queued).toBe(1);
    judge.releaseAll();
    expect(await holder).toBe('/');
    expect(await late).toBe('AbortError');

    expect(histogramCount(await harness.collect(), INSTRUMENTS.httpPoolQueueDuration.name)).toBe(0);
    expect(judge.received).toEqual(['/']);
  });

  it(
    name === 'undici 7'
      ? 'observe takes a Pool with its connections, and a Client'
      : 'observe refuses an undici 6 Client (it counts nothing in public) and a Pool without its connections',
    async () => {
      const telemetry = start('http://127.0.0.1:1');
      const pool = new undici.Pool('http://127.0.0.1:1', { connections: 2 });
      const client = new undici.Client('http://127.0.0.1:1');
      cleanups.push(
        () => pool.destroy(),
        () => client.destroy(),
      );
      const observe = telemetry.observe as (dispatcher: unknown, origin: string, limit?: unknown) => unknown;
      expect(() => observe(pool, 'http://127.0.0.1:1')).toThrow(RangeError);
      expect(() => observe(pool, 'http://127.0.0.1:1', { connections: 0 })).toThrow(/connections/);
      expect(() => observe(pool, 'http://127.0.0.1:1', { connections: 1.5 })).toThrow(RangeError);
      expect(observe(pool, 'http://127.0.0.1:1', { connections: 2 })).not.toBe(pool);
      if (name === 'undici 7') expect(observe(client, 'http://127.0.0.1:1')).not.toBe(client);
      else expect(() => observe(client, 'http://127.0.0.1:1')).toThrow(/Client \(7/);
    },
  );
});
