// The metrics endpoint stays reachable and cheap under a crowd, in a real server process:
// 80 slow clients that trickle their headers and come back when cut (100 ms later, or at once:
// a cap that closes newcomers at accept turns this into churn), and a client that pipelines scrapes and
// never reads, while a scraper scrapes every second. Every scrape succeeds, the app's /healthz
// keeps answering, and the server's memory stays under +100 MiB. Bounded: 10 scrapes per case,
// then everything is closed. One fresh server process per case.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, expect, it } from '@jest/globals';
import { cleanEnv, fixture, requireBuild } from './helpers/child-node.js';

const SLOW_CLIENTS = 80;
const SCRAPES = 10;

let server: ChildProcessWithoutNullStreams;
let urls: { metrics: string; app: string };

beforeEach(async () => {
  requireBuild();
  server = spawn(process.execPath, [fixture('crowded-server.mjs')], {
    env: cleanEnv({
      NEMO_GYM_OTEL_ENABLED: '1',
      NEMO_GYM_OTEL_EXPORTER: 'prometheus',
      OTEL_EXPORTER_PROMETHEUS_PORT: '0',
    }),
  });
  let out = '';
  urls = await new Promise((resolve, reject) => {
    server.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] as string));
    });
    server.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
  });
});

afterEach(async () => {
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  await exited;
});

async function rss(): Promise<number> {
  const response = await fetch(`${urls.app}/healthz`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { rss: number }).rss;
}

it.each([
  ['100 ms after being cut', 100],
  ['at once when cut', 0],
])(
  '80 slow clients that come back %s and a pipelining client never lock the scraper out, nor /healthz, and memory stays bounded',
  async (_, pauseMs) => {
    const { hostname, port } = new URL(urls.metrics);
    let stopped = false;
    const sockets = new Set<Socket>();
    const open = (onConnect: (socket: Socket) => void): void => {
      if (stopped) return;
      const socket = connect({ host: hostname, port: Number(port) }, () => onConnect(socket));
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        // Cut: come back.
        if (pauseMs === 0) setImmediate(() => open(onConnect));
        else setTimeout(() => open(onConnect), pauseMs);
      });
    };
    // Slow clients: one header byte every 200 ms, never finishing.
    const slow = (socket: Socket): void => {
      const header = `GET /metrics HTTP/1.1\r\nHost: ${hostname}\r\nX-Slow: ${'a'.repeat(4096)}`;
      let sent = 0;
      const trickle = setInterval(() => {
        if (socket.destroyed || stopped) return clearInterval(trickle);
        socket.write(header.charAt(sent++));
      }, 200);
      socket.once('close', () => clearInterval(trickle));
    };
    // The pipelining client: 20 scrapes at a time, again and again, never reading.
    const pipelining = (socket: Socket): void => {
      socket.pause();
      const flood = setInterval(() => {
        if (socket.destroyed || stopped) return clearInterval(flood);
        socket.write(`GET /metrics HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`.repeat(20));
      }, 50);
      socket.once('close', () => clearInterval(flood));
    };

    const before = await rss();
    let most = before;
    try {
      open(pipelining);
      for (let index = 0; index < SLOW_CLIENTS; index++) open(slow);
      const statuses: number[] = [];
      for (let scrape = 0; scrape < SCRAPES; scrape++) {
        await new Promise((resolve) => setTimeout(resolve, 1_000)); // the scrape interval (load, not a wait)
        const response = await fetch(urls.metrics, { signal: AbortSignal.timeout(15_000) });
        const body = await response.text();
        statuses.push(response.status);
        expect(body).toMatch(/^gym_event_loop_lag_ms_count/m);
        most = Math.max(most, await rss());
      }
      expect(statuses).toEqual(Array(SCRAPES).fill(200));
      expect(most - before).toBeLessThan(100 * 1024 * 1024);
    } finally {
      stopped = true;
      for (const socket of sockets) socket.destroy();
    }
  },
  120_000,
);
