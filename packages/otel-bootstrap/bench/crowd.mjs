// The crowd the Prometheus endpoint must survive, against one server in a child process, as the
// README's table of the endpoint reports it. Not part of `npm run bench` (it takes about 15 s a
// row): `node bench/crowd.mjs <server> <reconnect pause ms> [slow clients]` after a build, where
// <server> is `bootstrap` (this package, the defaults), `node-cap` (the exporter's handler on a
// node:http server with the same deadlines and `maxConnections` 64) or `exporter` (the exporter's
// own server, Node's defaults). Slow clients trickle one header byte every 200 ms and come back
// when cut; one client pipelines 20 scrapes every 50 ms and never reads; a scraper scrapes every
// second, 10 times. Prints the scrapes (status:ms), the server's peak memory growth and how
// many connections the clients opened.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';

const SCRAPES = 10;

async function serve(kind) {
  let endpoint;
  if (kind === 'bootstrap') {
    const { initTelemetry } = await import(new URL('../dist/index.js', import.meta.url).href);
    const env = {
      NEMO_GYM_OTEL_ENABLED: '1',
      NEMO_GYM_OTEL_EXPORTER: 'prometheus',
      OTEL_EXPORTER_PROMETHEUS_PORT: '0',
    };
    endpoint = (await initTelemetry({ serverName: 'crowded', serverType: 'resources_servers', env }))
      .prometheusEndpoint;
  } else {
    const { PrometheusExporter } = await import('@opentelemetry/exporter-prometheus');
    const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
    let exporter;
    if (kind === 'exporter') {
      // It reads port 0 as 9464: take a free port first.
      const port = await new Promise((resolve) => {
        const probe = createNetServer().listen(0, '127.0.0.1', () => {
          const { port: free } = probe.address();
          probe.close(() => resolve(free));
        });
      });
      exporter = new PrometheusExporter({ host: '127.0.0.1', port });
      await exporter.startServer();
      endpoint = `http://127.0.0.1:${port}/metrics`;
    } else {
      exporter = new PrometheusExporter({ preventServerStart: true });
      const server = createServer(
        { headersTimeout: 5_000, requestTimeout: 10_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 1_000 },
        (request, response) => exporter.getMetricsRequestHandler(request, response),
      );
      server.maxConnections = 64;
      await new Promise((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
      endpoint = `http://127.0.0.1:${server.address().port}/metrics`;
    }
    const histogram = new MeterProvider({ readers: [exporter] }).getMeter('crowd').createHistogram('gym.crowd.ms');
    setInterval(() => histogram.record(Math.random()), 100);
  }
  const app = createServer((_, response) => response.end(JSON.stringify({ rss: process.memoryUsage().rss })));
  await new Promise((resolve) => app.listen({ host: '127.0.0.1', port: 0 }, resolve));
  process.stdout.write(`${JSON.stringify({ metrics: endpoint, app: `http://127.0.0.1:${app.address().port}` })}\n`);
}

async function crowd(kind, pauseMs, slowClients) {
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, '--serve', kind]);
  child.stderr.pipe(process.stderr);
  const urls = await new Promise((resolve) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
    });
  });
  const { hostname, port } = new URL(urls.metrics);
  const sockets = new Set();
  let stopped = false;
  let connects = 0;
  const open = (onConnect) => {
    if (stopped) return;
    connects += 1;
    const socket = connect({ host: hostname, port: Number(port) }, () => onConnect(socket));
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      if (pauseMs === 0) setImmediate(() => open(onConnect));
      else setTimeout(() => open(onConnect), pauseMs);
    });
  };
  const every = (socket, ms, write) => {
    const timer = setInterval(() => (socket.destroyed || stopped ? clearInterval(timer) : write()), ms);
    socket.once('close', () => clearInterval(timer));
  };
  const slow = (socket) => {
    const header = `GET /metrics HTTP/1.1\r\nHost: ${hostname}\r\nX-Slow: ${'a'.repeat(4096)}`;
    let sent = 0;
    every(socket, 200, () => socket.write(header.charAt(sent++)));
  };
  const pipelining = (socket) => {
    socket.pause();
    every(socket, 50, () => socket.write(`GET /metrics HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`.repeat(20)));
  };
  const rss = async () => (await (await fetch(urls.app)).json()).rss;
  const before = await rss();
  let most = before;
  open(pipelining);
  for (let index = 0; index < slowClients; index++) open(slow);
  const scrapes = [];
  for (let scrape = 0; scrape < SCRAPES; scrape++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const began = performance.now();
    try {
      const response = await fetch(urls.metrics, { signal: AbortSignal.timeout(15_000) });
      await response.text();
      scrapes.push(`${response.status}:${Math.round(performance.now() - began)}`);
    } catch (error) {
      scrapes.push(`${error.cause?.code ?? error.name}:${Math.round(performance.now() - began)}`);
    }
    most = Math.max(most, await rss());
  }
  stopped = true;
  for (const socket of sockets) socket.destroy();
  child.kill('SIGTERM');
  const answered = scrapes.filter((one) => one.startsWith('200:')).length;
  const growth = Math.round((most - before) / 2 ** 20);
  console.log(`${kind}, ${slowClients} slow clients, reconnect after ${pauseMs} ms: ${answered}/${SCRAPES} scrapes`);
  console.log(`  scrapes ${scrapes.join(' ')}; memory +${growth} MiB; client connects ${connects}`);
}

const [first, second, third] = process.argv.slice(2);
if (first === '--serve') await serve(second);
else await crowd(first, Number(second ?? 0), Number(third ?? 80));
