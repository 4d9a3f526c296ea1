// The Prometheus endpoint's bounds on its clients, against the real endpoint initTelemetry
// binds on 127.0.0.1 (real SDK, real sockets): the headers deadline cuts a client that
// trickles its headers, there is no connection cap unless asked for (Node's own then), pipelined
// scrapes are answered whole and in order, only GET/HEAD of /metrics is served, and shutdown
// ends every open connection. Each test waits for socket events (an
// answer, an `end`, a `close`); no test depends on how fast the machine is. Without its
// bound, each test would hang until jest's timeout (Node's defaults hold a slow client for
// 60 s and an open connection forever).

import { INSTRUMENTS } from '@gym/constants';
import { afterEach, describe, expect, it } from '@jest/globals';
import { type InitTelemetryOptions, initTelemetry, shutdownTelemetry, type TelemetryHandle } from '../src/index.js';
import { resetTelemetryForTesting } from '../src/telemetry.js';
import { openRaw, parseResponses, type RawClient, readResponse, requestText } from './helpers/raw-http.js';

const ENV = { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: '0' };
/** The content type of the Prometheus text format, version 0.0.4. */
const EXPOSITION = 'text/plain; version=0.0.4; charset=utf-8';
/** Long enough never to fire during a test: a test that needs a bound to fire sets it small. */
const NEVER_MS = 600_000;

const open: RawClient[] = [];

afterEach(async () => {
  for (const client of open.splice(0)) client.socket.destroy();
  await resetTelemetryForTesting();
});

async function start(
  prometheus: InitTelemetryOptions['prometheus'],
  onWarning?: (message: string) => void,
): Promise<TelemetryHandle & { prometheusEndpoint: string }> {
  const handle = await initTelemetry({
    serverName: 'prom',
    serverType: 'resources_servers',
    env: ENV,
    prometheus,
    onWarning: onWarning ?? (() => {}),
  });
  if (handle?.prometheusEndpoint === undefined) throw new Error('expected a Prometheus endpoint');
  handle.meter.createGauge(INSTRUMENTS.serversActive.name).record(7);
  return handle as TelemetryHandle & { prometheusEndpoint: string };
}

/** An endpoint with a connection cap and no deadline that could fire during a test. */
function capped(maxConnections: number): ReturnType<typeof start> {
  return start({
    maxConnections,
    headersTimeoutMs: NEVER_MS,
    requestTimeoutMs: NEVER_MS,
    keepAliveTimeoutMs: NEVER_MS,
  });
}

async function client(endpoint: string): Promise<RawClient> {
  const raw = await openRaw(endpoint);
  open.push(raw);
  return raw;
}

describe('the Prometheus endpoint serves one route', () => {
  it('answers GET /metrics with the exposition text and the Prometheus content type, and HEAD with no body', async () => {
    const { prometheusEndpoint } = await start(undefined);
    const response = await fetch(prometheusEndpoint);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(EXPOSITION);
    expect(await response.text()).toMatch(/^gym_servers_active(\{[^}]*\})? 7$/m);

    const head = await fetch(prometheusEndpoint, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(EXPOSITION);
    expect(await head.text()).toBe('');

    const withQuery = await fetch(`${prometheusEndpoint}?name[]=gym_servers_active`);
    expect(withQuery.status).toBe(200);
    expect(await withQuery.text()).toMatch(/^gym_servers_active/m);
  });

  it('answers 404 off /metrics and 405 (with Allow) for another method, each with a body', async () => {
    const { prometheusEndpoint } = await start(undefined);
    const base = new URL(prometheusEndpoint);
    for (const path of ['/', '/other', '/metrics/', '/METRICS', '/metrics.txt']) {
      const response = await fetch(new URL(path, base));
      expect([path, response.status]).toEqual([path, 404]);
      expect(await response.text()).toBe('not found: the metrics are at /metrics\n');
    }
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) {
      const response = await fetch(prometheusEndpoint, { method, ...(method === 'POST' ? { body: 'x' } : {}) });
      expect([method, response.status]).toEqual([method, 405]);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      expect(await response.text()).toBe('method not allowed: /metrics answers GET and HEAD\n');
    }
  });

  it('does not read //host/metrics as /metrics', async () => {
    const { prometheusEndpoint } = await start(undefined);
    const raw = await client(prometheusEndpoint);
    raw.socket.write(requestText('//evil.example/metrics'));
    expect((await readResponse(raw)).status).toBe(404);
  });

  it('answers a malformed request with 400, then closes the connection', async () => {
    const { prometheusEndpoint } = await start(undefined);
    const raw = await client(prometheusEndpoint);
    raw.socket.write('GET /metrics HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n');
    const response = await readResponse(raw);
    expect(response.status).toBe(400);
    expect(response.headers.connection).toBe('close');
    await raw.ended;
  });
  it('never writes a refusal into the middle of an answer: a malformed request behind a pending scrape gets one whole response at most', async () => {
    const { prometheusEndpoint } = await start(undefined);
    const raw = await client(prometheusEndpoint);
    // One packet: a scrape (answered after an asynchronous collection), then garbage.
    raw.socket.write(`${requestText('/metrics')}NOT HTTP\r\n\r\n`);
    await raw.ended;
    // Node refuses before any byte of the scrape's answer is written, or not at all.
    expect(raw.received().match(/HTTP\/1\.1 /g)?.length ?? 0).toBeLessThanOrEqual(1);
  });
});

describe('the Prometheus endpoint bounds its clients', () => {
  it('cuts a client that sends its headers byte by byte at the headers deadline, with a 408', async () => {
    const headersTimeoutMs = 200;
    const { prometheusEndpoint } = await start({ headersTimeoutMs, requestTimeoutMs: NEVER_MS });
    const began = performance.now();
    const raw = await client(prometheusEndpoint);
    // Far more header than can arrive before the deadline, one byte at a time; under 16 KiB,
    // so only the deadline can end it.
    const header = `GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(10_000)}\r\n\r\n`;
    let sent = 0;
    const trickle = setInterval(() => {
      if (raw.received() !== '' || raw.socket.destroyed || sent === header.length) {
        clearInterval(trickle);
        return;
      }
      raw.socket.write(header[sent] as string);
      sent += 1;
    }, 5);
    try {
      const response = await readResponse(raw);
      // The server ended the connection: we never end or destroy it ourselves.
      await raw.ended;
      expect(response.status).toBe(408);
      expect(response.headers.connection).toBe('close');
      expect(sent).toBeLessThan(header.length);
      // Never before the deadline (the deadline counts from the server's accept, after `began`).
      expect(performance.now() - began).toBeGreaterThanOrEqual(headersTimeoutMs);
    } finally {
      clearInterval(trickle);
    }
  });

  it('cuts a connection that sends nothing at the headers deadline', async () => {
    const { prometheusEndpoint } = await start({ headersTimeoutMs: 100, requestTimeoutMs: NEVER_MS });
    const raw = await client(prometheusEndpoint);
    expect((await readResponse(raw)).status).toBe(408);
    await raw.ended;
  });

  it('has no connection cap by default: 300 silent connections and the scraper still gets in', async () => {
    const { prometheusEndpoint } = await start({ headersTimeoutMs: NEVER_MS, requestTimeoutMs: NEVER_MS });
    const crowd = await Promise.all(Array.from({ length: 300 }, () => client(prometheusEndpoint)));
    const scraper = await client(prometheusEndpoint);
    scraper.socket.write(requestText('/metrics'));
    const response = await readResponse(scraper);
    expect(response.status).toBe(200);
    expect(response.body).toMatch(/^gym_servers_active(\{[^}]*\})? 7$/m);
    // Nobody was closed to make room.
    expect(crowd.filter((one) => one.socket.destroyed)).toEqual([]);
  });

  it("with maxConnections, Node's own cap: a newcomer beyond it is closed at accept, the connections within are served", async () => {
    const { prometheusEndpoint } = await capped(2);
    const first = await client(prometheusEndpoint);
    const second = await client(prometheusEndpoint);
    const third = await client(prometheusEndpoint);
    await third.closed;
    expect(third.received()).toBe('');
    for (const one of [first, second]) {
      one.socket.write(requestText('/metrics'));
      expect((await readResponse(one)).status).toBe(200);
    }
  });

  it('answers pipelined requests one at a time, in order', async () => {
    const { prometheusEndpoint } = await start(undefined);
    const raw = await client(prometheusEndpoint);
    raw.socket.write(`${requestText('/metrics')}${requestText('/nowhere')}${requestText('/metrics')}`);
    // Wait for three whole responses (head and full body each), then check their order.
    const text = await raw.until((received) => parseResponses(received).length >= 3);
    const responses = parseResponses(text);
    expect(responses.map((response) => response.status)).toEqual([200, 404, 200]);
    expect(responses[0]?.body).toMatch(/^gym_servers_active(\{[^}]*\})? 7$/m);
    expect(responses[1]?.body).toBe('not found: the metrics are at /metrics\n');
    expect(responses[2]?.body).toMatch(/^gym_servers_active(\{[^}]*\})? 7$/m);
    // Nothing beyond the three: the text holds exactly three status lines.
    expect(text.match(/^HTTP\/1\.1 \d+/gm)).toHaveLength(3);
  });

  it('answers 50 pipelined scrapes, every one whole and in order', async () => {
    const { prometheusEndpoint } = await start(undefined);
    const raw = await client(prometheusEndpoint);
    raw.socket.write(requestText('/metrics').repeat(50));
    const text = await raw.until((received) => parseResponses(received).length >= 50);
    const responses = parseResponses(text);
    expect(responses.map((response) => response.status)).toEqual(Array(50).fill(200));
    for (const response of responses) expect(response.body).toMatch(/^gym_servers_active(\{[^}]*\})? 7$/m);
  });

  it('closes an idle keep-alive connection at the keep-alive timeout', async () => {
    const { prometheusEndpoint } = await start({ keepAliveTimeoutMs: 100 });
    const raw = await client(prometheusEndpoint);
    raw.socket.write(requestText('/metrics'));
    expect((await readResponse(raw)).status).toBe(200);
    await raw.ended;
  });
});

describe('shutdown of the Prometheus endpoint', () => {
  it('completes with idle keep-alive, half-sent and silent connections open, and closes every one', async () => {
    const warnings: string[] = [];
    const { prometheusEndpoint } = await start(
      { headersTimeoutMs: NEVER_MS, requestTimeoutMs: NEVER_MS, keepAliveTimeoutMs: NEVER_MS },
      (message) => warnings.push(message),
    );
    const keptAlive = await client(prometheusEndpoint);
    keptAlive.socket.write(requestText('/metrics'));
    expect((await readResponse(keptAlive)).status).toBe(200);
    const halfSent = await client(prometheusEndpoint);
    halfSent.socket.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const silent = await client(prometheusEndpoint);

    await shutdownTelemetry();
    await Promise.all([keptAlive.ended, halfSent.ended, silent.ended]);
    // The flush finished well within its deadline: nothing waited for a client.
    expect(warnings).toEqual([]);
    await expect(openRaw(prometheusEndpoint)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
