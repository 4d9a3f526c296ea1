// The Prometheus endpoint: the exporter's own request handler on a `node:http` server bounded by
// Node's own switches. Why not the exporter's own server: see "Why a server of our own" in the README.

import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import type { PrometheusLimits } from './prometheus-limits.js';
import type { TelemetryConfig } from './types.js';

const METRICS_PATH = '/metrics';
/** The Prometheus text format the exporter writes (0.0.4), named fully; the exporter says only `text/plain`. */
const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A refusal: one line of plain text. */
function refuse(response: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  const body = `${text}\n`;
  const length = Buffer.byteLength(body);
  response
    .writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': length, ...headers })
    .end(body);
}

/** GET or HEAD of exactly `/metrics` (a query string is ignored; `//host/metrics` is no route). */
function route(handler: PrometheusExporter, request: IncomingMessage, response: ServerResponse): void {
  if ((request.url ?? '').split('?', 1)[0] !== METRICS_PATH) {
    refuse(response, 404, `not found: the metrics are at ${METRICS_PATH}`);
  } else if (request.method !== 'GET' && request.method !== 'HEAD') {
    refuse(response, 405, `method not allowed: ${METRICS_PATH} answers GET and HEAD`, { allow: 'GET, HEAD' });
  } else if (request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] ?? '0') !== '0') {
    // A scrape has no body. `Connection: close`: node:http closes the connection once the answer is written.
    refuse(response, 400, `bad request: a scrape of ${METRICS_PATH} has no body`, { connection: 'close' });
  } else {
    // The handler sets its own content type at once and writes the text after collecting.
    handler.getMetricsRequestHandler(request, response);
    response.setHeader('content-type', EXPOSITION_CONTENT_TYPE);
  }
}

/**
 * Serves `handler` at `http://host:port/metrics` with `limits`. Listen errors (EADDRINUSE,
 * EACCES) reject; port 0 binds an ephemeral port, whose URL is returned. The server is
 * unref'd: a metrics endpoint never keeps a process alive.
 */
export async function startPrometheusServer(
  handler: PrometheusExporter,
  { prometheusHost: host, prometheusPort: port }: Pick<TelemetryConfig, 'prometheusHost' | 'prometheusPort'>,
  limits: PrometheusLimits,
): Promise<{ server: Server; endpoint: string }> {
  // Node looks for expired deadlines every quarter of the shorter one (25 ms to 1 s), not every 30 s.
  const checkEvery = Math.min(1_000, Math.max(25, Math.floor(limits.headersTimeoutMs / 4)));
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: checkEvery,
      // Node's default header size, fixed so a process-wide flag cannot raise it; a scraper sends a handful of headers.
      maxHeaderSize: 16 * 1024,
    },
    (request, response) => route(handler, request, response),
  );
  server.maxHeadersCount = 32;
  if (limits.maxConnections !== undefined) server.maxConnections = limits.maxConnections;
  // A client that stops reading its answer: no progress for longer than the request timeout
  // ends the socket, two checks after the deadlines so a silent client gets its 408 first.
  server.timeout = limits.requestTimeoutMs + 2 * checkEvery;
  await once(server.listen({ host, port }), 'listening');
  // After a successful listen, errors are per connection; the scrape just fails.
  server.on('error', () => {});
  server.unref();
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return { server, endpoint: `http://${shownHost}:${(server.address() as AddressInfo).port}${METRICS_PATH}` };
}
