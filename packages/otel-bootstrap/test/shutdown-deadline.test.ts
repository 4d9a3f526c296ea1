// shutdownTelemetry() is bounded by its own deadline, whatever the collector does. Real sockets
// on 127.0.0.1: a port that refuses connections, and a server that accepts and never answers.
// The assertions are about order, not speed: shutdown resolves while the exporter is still
// retrying or waiting (its own timeout is far longer than the deadline), and the export
// failure is reported once, afterwards.

import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { getTelemetryState } from '@gym/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { initTelemetry, shutdownTelemetry } from '../src/index.js';
import { isGloballyRegistered } from '../src/otel-globals.js';
import { resetTelemetryForTesting } from '../src/telemetry.js';

// The exporters read their own timeout from process.env: long enough that no export can
// finish inside the deadline, short enough that the abandoned one ends soon after the test.
const EXPORTER_TIMEOUT_MILLIS = 2000;
const DEADLINE_MILLIS = 150;
let savedTimeout: string | undefined;

beforeAll(() => {
  savedTimeout = process.env.OTEL_EXPORTER_OTLP_TIMEOUT;
  process.env.OTEL_EXPORTER_OTLP_TIMEOUT = String(EXPORTER_TIMEOUT_MILLIS);
});

afterAll(() => {
  if (savedTimeout === undefined) delete process.env.OTEL_EXPORTER_OTLP_TIMEOUT;
  else process.env.OTEL_EXPORTER_OTLP_TIMEOUT = savedTimeout;
});

afterEach(async () => {
  await resetTelemetryForTesting();
});

/** Collects warnings; `next(pattern)` resolves at the first one matching. */
function warningLog() {
  const messages: string[] = [];
  const waiters: { pattern: RegExp; resolve: (message: string) => void }[] = [];
  return {
    messages,
    onWarning(message: string) {
      messages.push(message);
      for (const waiter of waiters.filter((w) => w.pattern.test(message))) waiter.resolve(message);
    },
    next(pattern: RegExp): Promise<string> {
      const seen = messages.find((message) => pattern.test(message));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ pattern, resolve }));
    },
  };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return (server.address() as { port: number }).port;
}

/** Sets up OTLP export to `endpoint`, records one point and one span. */
async function exportingTo(endpoint: string, log: ReturnType<typeof warningLog>): Promise<void> {
  const handle = await initTelemetry({
    serverName: 'deadline',
    serverType: 'resources_servers',
    env: {
      NEMO_GYM_OTEL_ENABLED: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      NEMO_GYM_OTEL_SHUTDOWN_TIMEOUT_MILLIS: String(DEADLINE_MILLIS),
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
    },
    onWarning: log.onWarning,
  });
  expect(handle).toMatchObject({ metricsExporting: true, tracesExporting: true });
  handle?.meter.createCounter('gym.test.lost').add(1);
  handle?.tracer.startSpan('gym.test.lost').end();
}

const DEADLINE_WARNING = `@gym/otel-bootstrap: telemetry shutdown did not finish within ${DEADLINE_MILLIS} ms (NEMO_GYM_OTEL_SHUTDOWN_TIMEOUT_MILLIS); records not exported by then may be lost`;
const EXPORT_FAILED = /^@gym\/otel-bootstrap: (metrics|traces) export failed \(/;

describe('shutdownTelemetry() with a collector that refuses connections (closed port)', () => {
  it('resolves at its deadline with one warning, releases everything, then reports the export failure once', async () => {
    const probe = createServer();
    const port = await listen(probe);
    await new Promise((resolve) => probe.close(resolve));
    const log = warningLog();
    await exportingTo(`http://127.0.0.1:${port}`, log);

    await shutdownTelemetry();
    // The exporter is in its retry back-off (at least 800 ms): shutdown did not wait for it.
    expect(log.messages).toEqual([DEADLINE_WARNING]);
    expect(getTelemetryState()).toMatchObject({ metricsExporting: false, tracesExporting: false });
    expect(isGloballyRegistered('metrics')).toBe(false);
    expect(isGloballyRegistered('trace')).toBe(false);

    // Both signals fail when the exporter gives up; stderr hears about it once.
    await log.next(EXPORT_FAILED);
    expect(log.messages.filter((message) => EXPORT_FAILED.test(message))).toHaveLength(1);
    expect(log.messages.find((message) => EXPORT_FAILED.test(message))).toContain('ECONNREFUSED');
  });
});

describe('shutdownTelemetry() with a collector that accepts and never answers', () => {
  it('resolves at its deadline while the exports are still waiting for an answer', async () => {
    const sockets = new Set<Socket>();
    let connections = 0;
    const silent = createServer((socket) => {
      connections += 1;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.resume(); // read the request, answer nothing
    });
    const port = await listen(silent);
    try {
      const log = warningLog();
      await exportingTo(`http://127.0.0.1:${port}`, log);

      const reached = once(silent, 'connection');
      const done = shutdownTelemetry();
      await reached; // the flush reached the collector ...
      await done; // ... and shutdown is over
      expect(log.messages).toEqual([DEADLINE_WARNING]);
      // Still connected and unanswered: shutdown ended by its own deadline, not the exporter's.
      expect(connections).toBeGreaterThan(0);
      expect(sockets.size).toBeGreaterThan(0);
      expect(isGloballyRegistered('metrics')).toBe(false);

      await log.next(EXPORT_FAILED);
      expect(log.messages.filter((message) => EXPORT_FAILED.test(message))).toHaveLength(1);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('shutdownTelemetry() with a healthy collector', () => {
  it('waits for the flush (well inside the deadline) and says nothing', async () => {
    const paths: string[] = [];
    const collector = createHttpServer((request, response) => {
      paths.push(request.url ?? '');
      request.resume();
      request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
    });
    await new Promise<void>((resolve) => collector.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const { port } = collector.address() as { port: number };
    try {
      const log = warningLog();
      const handle = await initTelemetry({
        serverName: 'deadline',
        serverType: 'resources_servers',
        env: {
          NEMO_GYM_OTEL_ENABLED: '1',
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
          OTEL_METRIC_EXPORT_INTERVAL: '600000',
        },
        onWarning: log.onWarning,
      });
      expect(handle?.config.shutdownTimeoutMillis).toBe(5000);
      handle?.meter.createCounter('gym.test.kept').add(1);
      handle?.tracer.startSpan('gym.test.kept').end();
      await shutdownTelemetry();
      expect(paths.sort()).toEqual(['/v1/metrics', '/v1/traces']);
      expect(log.messages).toEqual([]);
    } finally {
      collector.closeAllConnections();
      await new Promise((resolve) => collector.close(resolve));
    }
  });
});
