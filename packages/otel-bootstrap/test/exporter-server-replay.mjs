// A short replay of the endpoint cases that decide between this package's server and the one
// `@opentelemetry/exporter-prometheus` starts itself (README, "Why a server of our own"): a client
// trickling its headers, a silent client, and shutdown while a client has a half-sent request.
// `node packages/otel-bootstrap/test/exporter-server-replay.mjs` after a build; about 40 s.
// Prints one line per server and case, and exits 1 when this package's server fails a case.
import { connect, createServer as createNetServer } from 'node:net';

const CUT_WITHIN_MS = 8_000; // this package's default headers deadline (5 s) plus its checking interval
const SHUTDOWN_WITHIN_MS = 10_000;

async function freePort() {
  return await new Promise((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** The exporter's own server, or this package's, as `{ port, shutdown }`. */
async function start(kind) {
  if (kind === 'exporter') {
    const { PrometheusExporter } = await import('@opentelemetry/exporter-prometheus');
    const port = await freePort();
    const exporter = new PrometheusExporter({ host: '127.0.0.1', port, preventServerStart: true });
    await exporter.startServer();
    return { port, shutdown: () => exporter.shutdown() };
  }
  const bootstrap = await import(new URL('../dist/index.js', import.meta.url).href);
  const env = { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: '0' };
  const handle = await bootstrap.initTelemetry({ serverName: 'replay', serverType: 'resources_servers', env });
  return { port: Number(new URL(handle.prometheusEndpoint).port), shutdown: () => bootstrap.shutdownTelemetry() };
}

/** Milliseconds until the server closes a client that sends `bytes` one every 200 ms, or `null` past `limit`. */
async function timeToCut(port, bytes, limit) {
  const socket = connect(port, '127.0.0.1');
  socket.on('data', () => {});
  socket.on('error', () => {});
  const began = Date.now();
  let index = 0;
  const trickle = setInterval(() => {
    if (index < bytes.length && !socket.destroyed) socket.write(bytes[index++]);
  }, 200);
  const closed = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), limit);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  clearInterval(trickle);
  socket.destroy();
  return closed ? Date.now() - began : null;
}

/** Milliseconds `shutdown()` takes while a client holds a half-sent request, or `null` past `limit`. */
async function shutdownWithHalfRequest(server, limit) {
  const socket = connect(server.port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write('GET /metrics HTTP/1.1\r\nHost: replay\r\n');
  await new Promise((resolve) => setTimeout(resolve, 100));
  const began = Date.now();
  const done = await Promise.race([
    server.shutdown().then(() => true),
    new Promise((resolve) => setTimeout(resolve, limit, false)),
  ]);
  socket.destroy();
  return done ? Date.now() - began : null;
}

const shown = (ms, limit) => (ms === null ? `not within ${limit} ms` : `${ms} ms`);
let failed = false;
for (const kind of ['bootstrap', 'exporter']) {
  const server = await start(kind);
  const trickling = await timeToCut(
    server.port,
    'GET /metrics HTTP/1.1\r\nHost: replay\r\nX-Slow: 1\r\n',
    CUT_WITHIN_MS,
  );
  const silent = await timeToCut(server.port, '', CUT_WITHIN_MS);
  const shutdown = await shutdownWithHalfRequest(server, SHUTDOWN_WITHIN_MS);
  process.stdout.write(
    `${kind.padEnd(9)} trickling client cut: ${shown(trickling, CUT_WITHIN_MS)}; silent client cut: ` +
      `${shown(silent, CUT_WITHIN_MS)}; shutdown with a half-sent request: ${shown(shutdown, SHUTDOWN_WITHIN_MS)}\n`,
  );
  if (kind === 'bootstrap') failed = trickling === null || silent === null || shutdown === null;
}
process.exit(failed ? 1 : 0);
