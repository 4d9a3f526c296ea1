// gym.server.requests.in_flight around real HTTP requests on 127.0.0.1: +1 at arrival, −1
// exactly once at response end or client abort, never negative.

import { once } from 'node:events';
import {
  type ClientRequest,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { ATTR_SERVER_NAME, INSTRUMENTS } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { trackInFlight } from '@gym/observer';
import { captureDiag, counterValue, createMetricHarness, findMetric, type MetricHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { Meter } from '@opentelemetry/api';

const NAME = { [ATTR_SERVER_NAME]: 'resources' };

/** A server whose handler holds every response until `release()`. */
interface SlowServer {
  readonly server: Server;
  readonly url: URL;
  /** Resolves when `n` requests have reached the handler. */
  arrived(n: number): Promise<void>;
  /** Ends every held response that is still open. */
  release(): void;
  /** Responses the handler saw, in arrival order. */
  readonly responses: ServerResponse[];
  close(): Promise<void>;
}

async function slowServer(): Promise<SlowServer> {
  const responses: ServerResponse[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const server = createServer((_request: IncomingMessage, response: ServerResponse) => {
    responses.push(response);
    for (const waiter of waiters.filter((w) => responses.length >= w.n)) waiter.resolve();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: new URL(`http://127.0.0.1:${port}/slow`),
    responses,
    arrived: (n) =>
      responses.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
    release() {
      for (const response of responses) if (!response.writableEnded && !response.destroyed) response.end('done');
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One GET; resolves with the body, or with 'aborted' when the client gives up. */
function get(url: URL): { request: ClientRequest; done: Promise<string> } {
  const request = httpRequest(url, { agent: false });
  const done = new Promise<string>((resolve) => {
    request.on('response', (response) => {
      let body = '';
      response.on('data', (chunk) => {
        body += chunk;
      });
      response.on('end', () => resolve(body));
      response.on('error', () => resolve('aborted'));
    });
    request.on('error', () => resolve('aborted'));
  });
  request.end();
  return { request, done };
}

/** Resolves once every response has emitted 'close' (Node emits it after 'finish' or an abort). */
async function allClosed(responses: readonly ServerResponse[]): Promise<void> {
  await Promise.all(responses.map((r) => (r.closed ? undefined : once(r, 'close'))));
}

let harness: MetricHarness;
let slow: SlowServer;
beforeEach(async () => {
  harness = createMetricHarness();
  slow = await slowServer();
});
afterEach(async () => {
  slow.release();
  await slow.close();
  await harness.shutdown();
  setTelemetryState(undefined);
});

const inFlight = async (attributes: Record<string, string> = NAME) =>
  counterValue(await harness.collect(), INSTRUMENTS.requestsInFlight.name, attributes);

describe('trackInFlight', () => {
  it('goes 3 → 0 around three slow requests, one of them aborted by its client', async () => {
    const untrack = trackInFlight(slow.server, { serverName: 'resources', meterProvider: harness.meterProvider });
    const calls = [get(slow.url), get(slow.url), get(slow.url)];
    await slow.arrived(3);
    expect(await inFlight()).toBe(3);

    // The client of the first gives up: its response closes without finishing.
    const aborted = slow.responses[0]!;
    const closed = once(aborted, 'close');
    calls[0]!.request.destroy();
    await closed;
    expect(aborted.writableFinished).toBe(false);
    expect(await inFlight()).toBe(2);

    slow.release();
    expect(await Promise.all(calls.map((c) => c.done))).toEqual(['aborted', 'done', 'done']);
    await allClosed(slow.responses.slice(1));
    expect(await inFlight()).toBe(0);

    const metric = findMetric(await harness.collect(), INSTRUMENTS.requestsInFlight.name);
    expect(metric.descriptor.unit).toBe(INSTRUMENTS.requestsInFlight.unit);
    expect((metric as { isMonotonic?: boolean }).isMonotonic).toBe(false);
    expect(metric.dataPoints.map((p) => p.attributes)).toEqual([NAME]);
    untrack();
  });

  it('a response ended by the handler at once counts +1 then −1, never below zero', async () => {
    const responses: ServerResponse[] = [];
    const quick = createServer((_request, response) => {
      responses.push(response);
      response.end('ok');
    });
    quick.listen(0, '127.0.0.1');
    await once(quick, 'listening');
    try {
      trackInFlight(quick, { meterProvider: harness.meterProvider });
      const url = new URL(`http://127.0.0.1:${(quick.address() as AddressInfo).port}/`);
      for (let i = 0; i < 5; i += 1) expect(await get(url).done).toBe('ok');
      // The client having the body says nothing about the server side's events: wait for each
      // response's 'close' (after 'finish'; the tracker's listeners were added first and ran first).
      await allClosed(responses);
      expect(await inFlight({})).toBe(0);
    } finally {
      quick.closeAllConnections();
      await new Promise<void>((resolve) => quick.close(() => resolve()));
    }
  });

  it('without serverName the series has no attributes', async () => {
    trackInFlight(slow.server, { meterProvider: harness.meterProvider });
    const call = get(slow.url);
    await slow.arrived(1);
    expect(await inFlight({})).toBe(1);
    slow.release();
    await call.done;
  });

  it('untrack stops counting new requests; requests already counted still end their count', async () => {
    const untrack = trackInFlight(slow.server, { serverName: 'resources', meterProvider: harness.meterProvider });
    const first = get(slow.url);
    await slow.arrived(1);
    untrack();
    untrack();
    const second = get(slow.url);
    await slow.arrived(2);
    expect(await inFlight()).toBe(1);
    slow.release();
    await Promise.all([first.done, second.done]);
    await allClosed(slow.responses);
    expect(await inFlight()).toBe(0);
  });

  it('tracking the same server twice counts each request once and returns the same untrack', async () => {
    const a = trackInFlight(slow.server, { serverName: 'resources', meterProvider: harness.meterProvider });
    const b = trackInFlight(slow.server, { serverName: 'resources', meterProvider: harness.meterProvider });
    expect(b).toBe(a);
    const call = get(slow.url);
    await slow.arrived(1);
    expect(await inFlight()).toBe(1);
    a();
    slow.release();
    await call.done;
  });

  it('off is free: with nothing exporting and nothing injected, no listener is added to the response', async () => {
    setTelemetryState({ metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator: false });
    const untrack = trackInFlight(slow.server, { serverName: 'resources' });
    const call = get(slow.url);
    await slow.arrived(1);
    const untracked = await slowServer();
    try {
      const plainCall = get(untracked.url);
      await untracked.arrived(1);
      // Node adds its own listeners to every response; ours would add a 'finish' and a 'close' one.
      for (const event of ['finish', 'close']) {
        expect(slow.responses[0]!.listenerCount(event)).toBe(untracked.responses[0]!.listenerCount(event));
      }
      untracked.release();
      await plainCall.done;
    } finally {
      await untracked.close();
    }
    slow.release();
    await call.done;
    untrack();
  });

  it('a throwing meter never reaches the request: the server answers, trouble is reported once', async () => {
    const warnings = captureDiag();
    const meter = {
      createUpDownCounter() {
        throw new Error('meter broke');
      },
    } as unknown as Meter;
    try {
      trackInFlight(slow.server, { serverName: 'resources', meterProvider: { getMeter: () => meter } });
      const calls = [get(slow.url), get(slow.url)];
      await slow.arrived(2);
      slow.release();
      expect(await Promise.all(calls.map((c) => c.done))).toEqual(['done', 'done']);
      expect(warnings.lines('warn').filter((l) => l.includes('meter broke'))).toHaveLength(1);
    } finally {
      warnings.stop();
    }
  });

  it('a counter whose add throws on −1 never throws into the response events', async () => {
    const warnings = captureDiag();
    let adds = 0;
    const meter = {
      createUpDownCounter: () => ({
        add(value: number) {
          adds += 1;
          if (value < 0) throw new Error('add broke');
        },
      }),
    } as unknown as Meter;
    try {
      trackInFlight(slow.server, { meterProvider: { getMeter: () => meter } });
      const call = get(slow.url);
      await slow.arrived(1);
      slow.release();
      expect(await call.done).toBe('done');
      await allClosed(slow.responses);
      // +1 once, −1 once ('finish' and 'close' both fired; only the first counts).
      expect(adds).toBe(2);
    } finally {
      warnings.stop();
    }
  });

  it('programming errors throw at once, naming the value', () => {
    expect(() => trackInFlight(slow.server, { serverName: 'a b' })).toThrow(
      /serverName must be a string matching.*"a b"/,
    );
    expect(() => trackInFlight(slow.server, { serverName: 'x'.repeat(129) })).toThrow(RangeError);
  });
});

/** One request with an `Expect` header; resolves with the status and body. */
function expecting(url: URL, expectation: string): Promise<string> {
  const request = httpRequest(url, { agent: false, method: 'POST', headers: { expect: expectation } });
  const done = new Promise<string>((resolve) => {
    request.on('response', (response) => {
      let body = '';
      response.on('data', (chunk) => {
        body += chunk;
      });
      response.on('end', () => resolve(`${response.statusCode} ${body}`));
    });
    request.on('error', () => resolve('aborted'));
  });
  request.end();
  return done;
}

/** Holds every response the application's own listener of `event` gets; `arrival` resolves at the first. */
function holdVia(server: Server, event: 'checkContinue' | 'checkExpectation') {
  const held: ServerResponse[] = [];
  let arrived: () => void = () => {};
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  server.on(event, (_request: IncomingMessage, response: ServerResponse) => {
    held.push(response);
    arrived();
  });
  return { held, arrival };
}

describe('requests with an Expect header', () => {
  it('a request the application serves in its own checkContinue listener is counted while it runs', async () => {
    trackInFlight(slow.server, { serverName: 'resources', meterProvider: harness.meterProvider });
    const { held, arrival } = holdVia(slow.server, 'checkContinue');
    const done = expecting(slow.url, '100-continue');
    await arrival;
    expect(await inFlight()).toBe(1);
    held[0]!.end('served');
    expect(await done).toBe('200 served');
    await allClosed(held);
    expect(await inFlight()).toBe(0);
  });

  it('a checkContinue listener that hands the request on as a request counts it once', async () => {
    trackInFlight(slow.server, { serverName: 'resources', meterProvider: harness.meterProvider });
    slow.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
      response.writeContinue();
      slow.server.emit('request', request, response);
    });
    const done = expecting(slow.url, '100-continue');
    await slow.arrived(1);
    expect(await inFlight()).toBe(1);
    slow.release();
    expect(await done).toBe('200 done');
    await allClosed(slow.responses);
    expect(await inFlight()).toBe(0);
  });

  it('a request the application serves in its checkExpectation listener is counted, once', async () => {
    trackInFlight(slow.server, { serverName: 'resources', meterProvider: harness.meterProvider });
    const { held, arrival } = holdVia(slow.server, 'checkExpectation');
    const done = expecting(slow.url, 'x-gym-custom');
    await arrival;
    expect(await inFlight()).toBe(1);
    held[0]!.end('custom');
    expect(await done).toBe('200 custom');
    await allClosed(held);
    expect(await inFlight()).toBe(0);
  });

  it('tracking changes nothing Node does: without listeners of the application, 100-continue reaches the handler and another expectation gets 417', async () => {
    const untrack = trackInFlight(slow.server, { serverName: 'resources', meterProvider: harness.meterProvider });
    expect(slow.server.listenerCount('checkContinue')).toBe(0);
    expect(slow.server.listenerCount('checkExpectation')).toBe(0);
    expect(await expecting(slow.url, 'x-gym-custom')).toBe('417 ');
    const continued = expecting(slow.url, '100-continue');
    await slow.arrived(1);
    expect(await inFlight()).toBe(1);
    slow.release();
    expect(await continued).toBe('200 done');
    // The application's listener comes and goes: ours follows it, and leaves with it.
    const listener = () => {};
    slow.server.on('checkContinue', listener);
    expect(slow.server.listenerCount('checkContinue')).toBe(2);
    slow.server.removeListener('checkContinue', listener);
    expect(slow.server.listenerCount('checkContinue')).toBe(0);
    slow.server.on('checkExpectation', listener);
    untrack();
    expect(slow.server.listeners('checkExpectation')).toEqual([listener]);
  });
});
