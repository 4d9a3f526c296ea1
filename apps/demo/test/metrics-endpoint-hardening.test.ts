// The Prometheus endpoint of a real resources server process has the server's own deadlines:
// the flags `--headers-timeout-ms` and `--request-timeout-ms` reach it (its 408 names them),
// it still answers a scrape, and it serves only GET/HEAD of /metrics. Every wait is for a
// socket event (an answer, the server ending the connection); without the bounds, the slow
// client would be held for Node's 60 s and the test would hit jest's timeout.

import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { prometheusEnv, startServer, type TestServer, terminate } from './support/processes.js';

const HEADERS_MS = 300;
const REQUEST_MS = 700;

let server: TestServer;

beforeAll(async () => {
  server = await startServer(
    [
      '--name',
      'metrics_bounds',
      '--headers-timeout-ms',
      String(HEADERS_MS),
      '--request-timeout-ms',
      String(REQUEST_MS),
    ],
    prometheusEnv(0),
  );
}, 30_000);

afterAll(async () => {
  await terminate(server?.process.child);
});

function metricsUrl(): string {
  if (server.metrics === null) throw new Error(`the server reported no metrics endpoint: ${server.process.stderr}`);
  return server.metrics;
}

/** Connects to the endpoint; `ended` resolves when the server ends the connection (or it closes). */
async function rawConnection(url: string): Promise<{ socket: Socket; received: () => string; ended: Promise<void> }> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  socket.on('error', () => {});
  const ended = new Promise<void>((resolve) => {
    socket.once('end', () => resolve());
    socket.once('close', () => resolve());
  });
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => text, ended };
}

describe("a resources server's Prometheus endpoint", () => {
  it("answers a client whose headers do not arrive within the headers timeout with a 408 (Node's own)", async () => {
    const raw = await rawConnection(metricsUrl());
    try {
      raw.socket.write('GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ');
      await raw.ended;
      const text = raw.received();
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
      expect(text.toLowerCase()).toContain('connection: close');
    } finally {
      raw.socket.destroy();
    }
  });

  it('still answers a scrape with the exposition text', async () => {
    const response = await fetch(metricsUrl());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await response.text()).toMatch(/^target_info\{/m);
  });

  it('serves only GET and HEAD of /metrics', async () => {
    const post = await fetch(metricsUrl(), { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    await post.arrayBuffer();
    const other = await fetch(new URL('/verify', metricsUrl()));
    expect(other.status).toBe(404);
    await other.arrayBuffer();
  });
});
