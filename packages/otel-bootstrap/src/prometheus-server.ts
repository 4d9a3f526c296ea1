// The Prometheus endpoint's HTTP server: the exporter's own request handler
// (`PrometheusExporter` with `preventServerStart`, then `getMetricsRequestHandler`) on a
// `node:http` server whose built-in bounds are set. The server is ours, so a listen error
// (EADDRINUSE) is a setup failure and port 0 works. Everything else is Node's:
//
// - `headersTimeout`, `requestTimeout` and `keepAliveTimeout`, checked every quarter of the
//   shorter deadline (25 ms to 1 s) instead of Node's 30 s, so each holds within a second of
//   what it says; Node answers a late client 408 and a malformed request 400 or 431, then
//   closes the connection (and never writes into an answer under way);
// - a socket timeout of the request timeout: a client that stops reading the answer is cut;
// - `maxConnections`: beyond it Node drops a new connection, and the `drop` event closes the
//   idle keep-alive connections (`closeIdleConnections`) so a scraper that tries again gets in;
// - one route: GET or HEAD of exactly `/metrics` (query ignored); 404 and 405 otherwise.
//
// Loaded with `import()` from sdk-pipeline.ts, only when the `prometheus` exporter is in use.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrometheusEndpointLimits } from './types.js';

type Limits = Readonly<Required<PrometheusEndpointLimits>>;

/** The one path served. */
export const METRICS_PATH = '/metrics';
/** The Prometheus text format the exporter writes (0.0.4), named fully; the exporter says only `text/plain`. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
/** Headers kept per request: a scraper sends a handful; the rest are not parsed into objects. */
const MAX_HEADERS_COUNT = 32;
/** Header bytes per request (Node's default, fixed here so a process-wide flag cannot raise it). */
const MAX_HEADER_SIZE = 16 * 1024;

/** Whatever serves one scrape into `response`: the exporter's public request handler. */
export interface MetricsHandler {
  getMetricsRequestHandler(request: IncomingMessage, response: ServerResponse): void;
}

/** How often Node looks for expired header and request deadlines: a quarter of the shorter one, 25 ms to 1 s. */
export function checkingIntervalMs(limits: Limits): number {
  return Math.min(1_000, Math.max(25, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));
}

function answer(response: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  const body = `${text}\n`;
  response.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    ...headers,
  });
  response.end(body);
}

/** The route: GET or HEAD of exactly `/metrics` (a query string is ignored; `//host/metrics` is no route). */
function route(handler: MetricsHandler, request: IncomingMessage, response: ServerResponse): void {
  const target = request.url ?? '';
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  if (path !== METRICS_PATH) {
    answer(response, 404, `not found: the metrics are at ${METRICS_PATH}`);
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    answer(response, 405, `method not allowed: ${METRICS_PATH} answers GET and HEAD`, { allow: 'GET, HEAD' });
    return;
  }
  handler.getMetricsRequestHandler(request, response);
  // The exporter answers after an asynchronous collection, so its headers are not sent yet.
  if (!response.headersSent) response.setHeader('content-type', EXPOSITION_CONTENT_TYPE);
}

/**
 * Serves `handler` at `http://host:port/metrics` with `limits`. Listen errors (EADDRINUSE,
 * EACCES) reject; port 0 binds an ephemeral port, whose URL is returned. The server is
 * unref'd: a metrics endpoint never keeps a process alive.
 */
export async function startPrometheusServer(
  handler: MetricsHandler,
  host: string,
  port: number,
  limits: Limits,
): Promise<{ server: Server; endpoint: string }> {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(limits),
      maxHeaderSize: MAX_HEADER_SIZE,
    },
    (request, response) => route(handler, request, response),
  );
  server.maxConnections = limits.maxConnections;
  server.maxHeadersCount = MAX_HEADERS_COUNT;
  // No progress for longer than the request timeout while a request is read or answered ends
  // the socket (a client that stops reading); two checking intervals later than the
  // deadlines, so a silent client gets its 408 first.
  server.timeout = limits.requestTimeoutMs + 2 * checkingIntervalMs(limits);
  server.on('drop', () => server.closeIdleConnections());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => {
    // After a successful listen, errors are per connection; the scrape just fails.
  });
  server.unref();
  const boundPort = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return { server, endpoint: `http://${shownHost}:${boundPort}${METRICS_PATH}` };
}

/** Stops listening and drops every connection (idle, keep-alive or mid-request); never waits for a client. */
export function closePrometheusServer(server: Server): void {
  server.close(() => {
    // Already closed is fine.
  });
  server.closeAllConnections();
}
