// Gym's connection-pool behaviour cases, on a real undici Pool, undici's fetch and Node's own
// fetch against real node:http servers on 127.0.0.1, read back from a real SDK. Queueing is
// forced by holding the server's responses, never by timing.

import { AsyncLocalStorage } from 'node:async_hooks';
import { hasSubscribers } from 'node:diagnostics_channel';
import {
  ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT,
  ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME,
  ATTR_HTTP_DESTINATION_SERVER_NAME,
  INSTRUMENTS,
} from '@gym/constants';
import { startHttpPoolTelemetry } from '@gym/http-pool';
import {
  captureDiag,
  counterValue,
  createMetricHarness,
  findMetric,
  histogramCount,
  histogramPoint,
  type MetricHarness,
  pointsOf,
  resetDiag,
  waitFor,
} from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import * as undici7 from 'undici';
import * as undici6 from 'undici6';
import { type HeldServer, startHeldServer } from './support/held-server.js';

const CREATE = 'undici:request:create';

type Pool = undici7.Pool;
type Undici = Pick<typeof undici7, 'Pool' | 'fetch' | 'interceptors'>;
// undici 7 hands interceptors handlers of its controller shape, undici 6 of the older abort shape.
const UNDICI: [string, Undici][] = [
  ['undici 7', undici7],
  ['undici 6', undici6 as unknown as Undici],
];

const queuePoint = (outcome: 'ok' | 'abandoned', name: string) => ({
  [ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT]: 'per_host',
  [ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME]: outcome,
  [ATTR_HTTP_DESTINATION_SERVER_NAME]: name,
});
/** The limit of the tests' one-connection pools. */
const ONE = { connections: 1 };
const destination = (name: string) => ({ [ATTR_HTTP_DESTINATION_SERVER_NAME]: name });

describe.each(UNDICI)('%s', (name, undici) => {
  const { Pool, fetch: undiciFetch } = undici;
  // Reports are once per process: the first variant sees each one, the second none.
  const reports = name === 'undici 7' ? 1 : 0;
  let harness: MetricHarness;
  let servers: HeldServer[];
  let pools: Pool[];
  let stops: (() => void)[];

  beforeEach(() => {
    harness = createMetricHarness();
    servers = [];
    pools = [];
    stops = [];
  });

  afterEach(async () => {
    for (const stop of stops) stop();
    for (const server of servers) server.releaseAll();
    await Promise.all(pools.map((pool) => pool.destroy()));
    await Promise.all(servers.map((server) => server.close()));
    await harness.shutdown();
  });

  async function server(): Promise<HeldServer> {
    const started = await startHeldServer();
    servers.push(started);
    return started;
  }

  function pool(origin: string): Pool {
    const made = new Pool(origin, { connections: 1 });
    pools.push(made);
    return made;
  }

  function start(destinations: Record<string, string>) {
    const telemetry = startHttpPoolTelemetry({ meterProvider: harness.meterProvider, destinations });
    stops.push(() => telemetry.stop());
    return telemetry;
  }

  /** A held server named `judge` and its one-connection pool, observed. */
  async function observedJudge() {
    const judge = await server();
    const telemetry = start({ [judge.origin]: 'judge' });
    const raw = pool(judge.origin);
    return { judge, raw, observed: telemetry.observe(raw, judge.origin, ONE) };
  }

  /** Sends `/first` and waits until the server holds it: the pool's one connection is busy. */
  async function occupy(judge: HeldServer, dispatcher: Pool) {
    const first = get(dispatcher, '/first');
    await waitFor('the first request to reach the server', () => judge.received.length === 1);
    return { first };
  }

  async function get(dispatcher: { request: Pool['request'] }, path: string, signal?: AbortSignal): Promise<string> {
    const { statusCode, body } = await dispatcher.request({ method: 'GET', path, signal });
    expect(statusCode).toBe(200);
    return body.text();
  }

  describe('a queued request', () => {
    it('a request that found a free connection records no wait, but counts in connect_total', async () => {
      const judge = await server();
      judge.releaseAll();
      const telemetry = start({ [judge.origin]: 'judge' });
      const observed = telemetry.observe(pool(judge.origin), judge.origin, ONE);

      expect(await get(observed, '/one')).toBe('/one');

      const collected = await harness.collect();
      expect(histogramCount(collected, INSTRUMENTS.httpPoolQueueDuration.name)).toBe(0);
      expect(counterValue(collected, INSTRUMENTS.httpPoolConnectTotal.name, destination('judge'))).toBe(1);
    });

    it('records one point for the request that waited, in Gym buckets, and counts both in connect_total', async () => {
      const { judge, raw, observed } = await observedJudge();

      const { first } = await occupy(judge, observed);
      const second = get(observed, '/second');
      await waitFor('the second request to queue in the pool', () => raw.stats.queued === 1);
      expect(histogramCount(await harness.collect(), INSTRUMENTS.httpPoolQueueDuration.name)).toBe(0);

      judge.releaseAll();
      expect(await Promise.all([first, second])).toEqual(['/first', '/second']);

      const collected = await harness.collect();
      const point = histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, queuePoint('ok', 'judge'));
      expect(point.count).toBe(1);
      expect(point.sum).toBeGreaterThan(0);
      expect(point.buckets.boundaries).toEqual([...INSTRUMENTS.httpPoolQueueDuration.boundaries]);
      expect(findMetric(collected, INSTRUMENTS.httpPoolQueueDuration.name).descriptor.unit).toBe('ms');
      expect(findMetric(collected, INSTRUMENTS.httpPoolConnectTotal.name).descriptor.unit).toBe(
        INSTRUMENTS.httpPoolConnectTotal.unit,
      );
      expect(counterValue(collected, INSTRUMENTS.httpPoolConnectTotal.name, destination('judge'))).toBe(2);
    });

    it('fetch through the observed pool (undici fetch and Node fetch) is timed the same way', async () => {
      const { judge, raw, observed } = await observedJudge();

      const first = undiciFetch(`${judge.origin}/a`, { dispatcher: observed }).then((r) => r.text());
      await waitFor('the first fetch to reach the server', () => judge.received.length === 1);
      const second = undiciFetch(`${judge.origin}/b`, { dispatcher: observed }).then((r) => r.text());
      // Node's fetch accepts an npm undici dispatcher; its undici is a different copy.
      const third = fetch(`${judge.origin}/c`, { dispatcher: observed } as unknown as RequestInit).then((r) =>
        r.text(),
      );
      await waitFor('two fetches to queue in the pool', () => raw.stats.queued === 2);
      judge.releaseAll();
      expect(await Promise.all([first, second, third])).toEqual(['/a', '/b', '/c']);

      const collected = await harness.collect();
      expect(histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, queuePoint('ok', 'judge')).count).toBe(
        2,
      );
      expect(counterValue(collected, INSTRUMENTS.httpPoolConnectTotal.name, destination('judge'))).toBe(3);
    });

    it('a cancelled wait is recorded as abandoned, and the pool serves the next request', async () => {
      const { judge, raw, observed } = await observedJudge();

      const { first } = await occupy(judge, observed);
      const controller = new AbortController();
      const cancelled = get(observed, '/cancelled', controller.signal).then(
        () => 'served',
        (error: unknown) => (error as Error).name,
      );
      const fetchController = new AbortController();
      const cancelledFetch = fetch(`${judge.origin}/cancelled-fetch`, {
        dispatcher: observed,
        signal: fetchController.signal,
      } as unknown as RequestInit).then(
        () => 'served',
        (error: unknown) => (error as Error).name,
      );
      await waitFor('both to queue in the pool', () => raw.stats.queued === 2);
      controller.abort();
      fetchController.abort();
      expect(await cancelledFetch).toBe('AbortError');
      judge.releaseAll();
      expect(await first).toBe('/first');
      expect(await cancelled).toBe('AbortError');
      expect(await get(observed, '/after')).toBe('/after');

      const collected = await harness.collect();
      // undici keeps a cancelled request in the queue until a connection frees; it leaves then.
      const abandoned = histogramPoint(
        collected,
        INSTRUMENTS.httpPoolQueueDuration.name,
        queuePoint('abandoned', 'judge'),
      );
      expect(abandoned.count).toBe(2);
      expect(abandoned.sum).toBeGreaterThan(0);
      expect(judge.received).toEqual(['/first', '/after']);
    });

    it('a pool destroyed under a queued request records the wait as abandoned', async () => {
      const { judge, raw, observed } = await observedJudge();

      const first = get(observed, '/first').catch((error: unknown) => (error as Error).name);
      await waitFor('the first request to reach the server', () => judge.received.length === 1);
      const queued = get(observed, '/queued').catch((error: unknown) => (error as Error).name);
      await waitFor('the second to queue', () => raw.stats.queued === 1);
      await raw.destroy();
      expect(await queued).toBe('ClientDestroyedError');
      await first;

      const collected = await harness.collect();
      expect(
        histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, queuePoint('abandoned', 'judge')).count,
      ).toBe(1);
    });
  });

  describe('destination labels', () => {
    it("each call is labelled by its own origin, an unnamed one is external, and the caller's context is untouched", async () => {
      const judge = await server();
      const other = await server();
      judge.releaseAll();
      other.releaseAll();
      const telemetry = start({ [`${judge.origin}/ignored/path`]: 'judge' });
      const named = telemetry.observe(pool(judge.origin), judge.origin, ONE);
      const unnamed = telemetry.observe(pool(other.origin), new URL(other.origin), ONE);
      const manager = new AsyncLocalStorageContextManager().enable();
      context.setGlobalContextManager(manager);
      const storage = new AsyncLocalStorage<string>();
      const key = createContextKey('caller');
      try {
        await storage.run('caller-store', () =>
          context.with(ROOT_CONTEXT.setValue(key, 'caller-value'), async () => {
            await get(named, '/named');
            expect(storage.getStore()).toBe('caller-store');
            expect(context.active().getValue(key)).toBe('caller-value');
            await get(unnamed, '/unnamed');
            await fetch(`${judge.origin}/global-fetch`).then((r) => r.text());
            expect(storage.getStore()).toBe('caller-store');
            expect(context.active().getValue(key)).toBe('caller-value');
          }),
        );
      } finally {
        context.disable();
      }

      const collected = await harness.collect();
      expect(counterValue(collected, INSTRUMENTS.httpPoolConnectTotal.name, destination('judge'))).toBe(2);
      expect(counterValue(collected, INSTRUMENTS.httpPoolConnectTotal.name, destination('external'))).toBe(1);
    });

    it('concurrent destinations keep their own labels', async () => {
      const judge = await server();
      const policy = await server();
      const telemetry = start({ [judge.origin]: 'judge', [policy.origin]: 'policy_model' });
      const judgePool = pool(judge.origin);
      const policyPool = pool(policy.origin);
      const judges = telemetry.observe(judgePool, judge.origin, ONE);
      const policies = telemetry.observe(policyPool, policy.origin, ONE);

      const calls = [get(judges, '/j1'), get(policies, '/p1')];
      await waitFor('both first requests at their servers', () => judge.received.length + policy.received.length === 2);
      calls.push(get(judges, '/j2'), get(policies, '/p2'), get(policies, '/p3'));
      await waitFor('three queued', () => judgePool.stats.queued + policyPool.stats.queued === 3);
      // The policy server frees its slot first, while the judge request is still waiting.
      policy.releaseAll();
      await waitFor('the policy requests to finish', () => policy.received.length === 3);
      judge.releaseAll();
      expect(await Promise.all(calls)).toEqual(['/j1', '/p1', '/j2', '/p2', '/p3']);

      const collected = await harness.collect();
      expect(histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, queuePoint('ok', 'judge')).count).toBe(
        1,
      );
      expect(
        histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, queuePoint('ok', 'policy_model')).count,
      ).toBe(2);
      expect(pointsOf(collected, INSTRUMENTS.httpPoolQueueDuration.name)).toHaveLength(2);
      expect(counterValue(collected, INSTRUMENTS.httpPoolConnectTotal.name, destination('judge'))).toBe(2);
      expect(counterValue(collected, INSTRUMENTS.httpPoolConnectTotal.name, destination('policy_model'))).toBe(3);
    });

    it('a retry is its own attempt: it waits, and is counted, again', async () => {
      let flakyCalls = 0;
      const judge = await startHeldServer((request, response) => {
        if (request.url !== '/flaky') return false;
        flakyCalls += 1;
        response.writeHead(flakyCalls === 1 ? 503 : 200).end('/flaky');
        return true;
      });
      servers.push(judge);
      const telemetry = start({ [judge.origin]: 'judge' });
      const raw = pool(judge.origin);
      const observed = telemetry.observe(raw, judge.origin, ONE);
      const retrying = (observed as undici7.Pool).compose(
        undici.interceptors.retry({ maxRetries: 1, minTimeout: 1, statusCodes: [503], methods: ['GET'] }),
      );

      const { first } = await occupy(judge, observed);
      const flaky = get(retrying, '/flaky');
      const second = get(observed, '/second');
      await waitFor('both to queue', () => raw.stats.queued === 2);
      judge.releaseOne();
      // /flaky gets its 503 and /second takes the connection; the retry has to queue behind it.
      await waitFor('the retry to queue behind /second', () => judge.received.length === 3 && raw.stats.queued === 1);
      judge.releaseAll();
      expect(await Promise.all([first, flaky, second])).toEqual(['/first', '/flaky', '/second']);

      const collected = await harness.collect();
      expect(flakyCalls).toBe(2);
      expect(histogramPoint(collected, INSTRUMENTS.httpPoolQueueDuration.name, queuePoint('ok', 'judge')).count).toBe(
        3,
      );
      expect(counterValue(collected, INSTRUMENTS.httpPoolConnectTotal.name, destination('judge'))).toBe(4);
    });

    it('a redirect hop is its own connection attempt', async () => {
      const judge = await startHeldServer((request, response) => {
        if (request.url !== '/moved') return false;
        response.writeHead(302, { location: '/target' }).end();
        return true;
      });
      servers.push(judge);
      judge.releaseAll();
      const telemetry = start({ [judge.origin]: 'judge' });
      const observed = telemetry.observe(pool(judge.origin), judge.origin, ONE);

      expect(await undiciFetch(`${judge.origin}/moved`, { dispatcher: observed }).then((r) => r.text())).toBe(
        '/target',
      );

      expect(counterValue(await harness.collect(), INSTRUMENTS.httpPoolConnectTotal.name, destination('judge'))).toBe(
        2,
      );
    });
  });

  describe('failures and off', () => {
    it('a throwing meter does not change the response; it is reported once', async () => {
      const diag = captureDiag();
      try {
        const judge = await server();
        const throwing = {
          createHistogram: () => ({
            record: () => {
              throw new Error('meter broke');
            },
          }),
          createObservableCounter: () => ({ addCallback: () => {}, removeCallback: () => {} }),
        };
        const telemetry = startHttpPoolTelemetry({
          meterProvider: { getMeter: () => throwing as never },
          destinations: { [judge.origin]: 'judge' },
        });
        stops.push(() => telemetry.stop());
        const raw = pool(judge.origin);
        const observed = telemetry.observe(raw, judge.origin, ONE);

        const first = get(observed, '/first');
        await waitFor('the first request to reach the server', () => judge.received.length === 1);
        const second = get(observed, '/second');
        const third = get(observed, '/third');
        await waitFor('two to queue', () => raw.stats.queued === 2);
        judge.releaseAll();

        expect(await Promise.all([first, second, third])).toEqual(['/first', '/second', '/third']);
        expect(diag.messages.filter((m) => m.message.includes('meter broke'))).toHaveLength(reports);
      } finally {
        resetDiag();
      }
    });

    it('a meter that cannot make instruments leaves the pool as it is', async () => {
      const diag = captureDiag();
      try {
        const judge = await server();
        const broken = {
          createHistogram: () => {
            throw new Error('no histograms today');
          },
        };
        const telemetry = startHttpPoolTelemetry({ meterProvider: { getMeter: () => broken as never } });
        const raw = pool(judge.origin);
        expect(telemetry.observe(raw, judge.origin, ONE)).toBe(raw);
        expect(hasSubscribers(CREATE)).toBe(false);
        expect(diag.messages.filter((m) => m.message.includes('no histograms today'))).toHaveLength(reports);
      } finally {
        resetDiag();
      }
    });

    it('when nothing exports there are no subscribers and observe returns the pool itself', async () => {
      const judge = await server();
      const telemetry = startHttpPoolTelemetry({ destinations: { [judge.origin]: 'judge' } });
      const raw = pool(judge.origin);
      expect(telemetry.observe(raw, judge.origin, ONE)).toBe(raw);
      expect(() => telemetry.observe(raw, 'judge', ONE)).toThrow(RangeError);
      expect(hasSubscribers(CREATE)).toBe(false);
    });

    it('stop() unsubscribes, and observed pools record nothing more', async () => {
      const judge = await server();
      const telemetry = start({ [judge.origin]: 'judge' });
      expect(hasSubscribers(CREATE)).toBe(true);
      const raw = pool(judge.origin);
      const observed = telemetry.observe(raw, judge.origin, ONE);
      telemetry.stop();
      telemetry.stop();
      expect(hasSubscribers(CREATE)).toBe(false);

      const { first } = await occupy(judge, observed);
      const second = get(observed, '/second');
      await waitFor('the second to queue', () => raw.stats.queued === 1);
      judge.releaseAll();
      await Promise.all([first, second]);
      expect(histogramCount(await harness.collect(), INSTRUMENTS.httpPoolQueueDuration.name)).toBe(0);
    });

    it('invalid destinations throw a RangeError naming the value', () => {
      const meterProvider = harness.meterProvider;
      expect(() => startHttpPoolTelemetry({ meterProvider, destinations: { 'not a url': 'judge' } })).toThrow(
        RangeError,
      );
      expect(() =>
        startHttpPoolTelemetry({ meterProvider, destinations: { 'http://127.0.0.1:1': 'no spaces' } }),
      ).toThrow(/no spaces/);
      expect(() => startHttpPoolTelemetry({ meterProvider, destinations: { 'file:///tmp/x': 'judge' } })).toThrow(
        RangeError,
      );
      expect(hasSubscribers(CREATE)).toBe(false);
      const telemetry = start({});
      expect(() => telemetry.observe(pool('http://127.0.0.1:1'), 'judge', ONE)).toThrow(RangeError);
    });
  });
});
