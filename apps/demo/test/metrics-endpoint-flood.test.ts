// A scrape always gets in. A resources server's Prometheus endpoint flooded by clients that each
// send a complete `GET /metrics` head announcing a chunked body and then trickle a chunk a second
// (so each has "sent a request" and is not the first to be evicted), reconnecting at once when
// closed: scrapes with a 1 s timeout, as the demo's Prometheus sends them, all succeed. A scrape
// has no body: such a request is answered 400 and its connection closed at once. Loopback only,
// bounded in clients (160) and time (the scrapes, about 10 s). Before the endpoint refused bodies,
// 19 of 30 scrapes succeeded under this flood.

import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { prometheusEnv, startServer, type TestServer, terminate } from './support/processes.js';

const CLIENTS = 160;
const SCRAPES = 30;
const SCRAPE_TIMEOUT_MS = 1_000;

let server: TestServer;

beforeAll(async () => {
  server = await startServer(['--name', 'metrics_flood'], prometheusEnv(0));
}, 30_000);

afterAll(async () => {
  await terminate(server?.process.child);
});

function endpoint(): URL {
  if (server.metrics === null) throw new Error(`the server reported no metrics endpoint: ${server.process.stderr}`);
  return new URL(server.metrics);
}

const CHUNKED_HEAD = 'GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n';

/** One client of the flood: the head, then a chunk a second; reconnects at once when closed, until `stop`. */
async function trickler(stop: AbortSignal, counts: { connections: number }): Promise<void> {
  const { port } = endpoint();
  while (!stop.aborted) {
    counts.connections++;
    const socket: Socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    socket.resume();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(CHUNKED_HEAD);
    const timer = setInterval(() => socket.write('1\r\na\r\n'), 1_000);
    await Promise.race([closed, new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }))]);
    clearInterval(timer);
    socket.destroy();
  }
}

describe("a resources server's Prometheus endpoint under a flood of requests that never end", () => {
  it('answers a request with a body 400 and closes its connection', async () => {
    const { port } = endpoint();
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(CHUNKED_HEAD);
    socket.write('1\r\na\r\n');
    // The server ends the connection; the body never ended.
    await closed;
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(text).toContain('has no body');
    // A declared length is a body too.
    const response = await fetch(endpoint(), { method: 'GET', headers: { 'content-length': '0' } });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  });

  it(`lets every scrape in (${SCRAPE_TIMEOUT_MS} ms timeout) while ${CLIENTS} clients trickle bodies`, async () => {
    const stop = new AbortController();
    const counts = { connections: 0 };
    const flood = Array.from({ length: CLIENTS }, () => trickler(stop.signal, counts));
    const results: string[] = [];
    try {
      // Let the flood fill the endpoint's places first.
      await sleep(1_500);
      for (let scrape = 0; scrape < SCRAPES; scrape++) {
        const started = performance.now();
        try {
          const response = await fetch(endpoint(), { signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) });
          const text = await response.text();
          results.push(response.status === 200 && /^target_info\{/m.test(text) ? 'ok' : `status ${response.status}`);
        } catch (error) {
          results.push(`failed after ${Math.round(performance.now() - started)} ms: ${(error as Error).name}`);
        }
        await sleep(300);
      }
    } finally {
      stop.abort();
      await Promise.all(flood);
    }
    process.stdout.write(
      `flood: ${CLIENTS} clients, ${counts.connections} connections; scrapes ok ${results.filter((r) => r === 'ok').length} of ${SCRAPES}\n`,
    );
    expect(results.filter((result) => result !== 'ok')).toEqual([]);
  }, 60_000);
});
