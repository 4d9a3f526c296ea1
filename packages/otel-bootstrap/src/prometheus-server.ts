// The Prometheus endpoint's HTTP server. The exporter runs with `preventServerStart` and only
// its public `getMetricsRequestHandler` is used: the server is ours, so a listen error
// (EADDRINUSE) is a setup failure, port 0 works, and the server has bounds on its clients:
//
// - header and request deadlines, checked every quarter of the shorter one (25 ms to 1 s)
//   instead of Node's 30 s, so each holds within a second of what it says;
// - a keep-alive timeout, and no progress for the request timeout (a client that stops
//   reading the answer) closes the socket;
// - a connection cap: beyond it a new connection is dropped, and idle keep-alive connections
//   are closed so a scraper that tries again gets in;
// - one route: GET or HEAD of exactly `/metrics` (query ignored); 404 and 405 otherwise;
// - every parser-level refusal (malformed, too slow, headers too large) answered with a
//   status line and a one-line body, then the connection closed.
//
// Loaded with `import()` from sdk-pipeline.ts, only when the `prometheus` exporter is in use.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
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
/** How long a refused connection may stay open so its client can read the answer. */
const LINGER_MS = 1_000;
/** Closing idle connections to make room is done at most this often. */
const MAKE_ROOM_EVERY_MS = 250;

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** Whatever serves one scrape into `response`: the exporter's public request handler. */
export interface MetricsHandler {
  getMetricsRequestHandler(request: IncomingMessage, response: ServerResponse): void;
}

/** How often Node looks for expired header and request deadlines: a quarter of the shorter one, 25 ms to 1 s. */
export function checkingIntervalMs(limits: Limits): number {
  return Math.min(1_000, Math.max(25, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));
}

/** The status and sentence for an error of Node's HTTP parser or of its deadline check. */
function describeClientError(error: Error & { code?: unknown }, limits: Limits): [number, string] {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [
        408,
        `the request did not arrive in time (headers within ${limits.headersTimeoutMs} ms, the whole request within ${limits.requestTimeoutMs} ms)`,
      ];
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'the request headers are too large'];
    default:
      return [400, `malformed HTTP request (${typeof error.code === 'string' ? error.code : 'parse error'})`];
  }
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

/** The connection cap (and the make-room rule), the socket timeout, and the parser-error answers. */
function applyLimits(server: Server, limits: Limits): void {
  server.maxConnections = limits.maxConnections;
  // No progress for longer than the request timeout while a request is read or answered ends
  // the socket (a client that stops reading); between requests the keep-alive timeout applies
  // instead. Two checking intervals later than the deadlines, so a silent client gets its 408.
  server.timeout = limits.requestTimeoutMs + 2 * checkingIntervalMs(limits);
  server.maxHeadersCount = MAX_HEADERS_COUNT;
  let lastMadeRoom = Number.NEGATIVE_INFINITY;
  server.on('drop', () => {
    const now = performance.now();
    if (now - lastMadeRoom < MAKE_ROOM_EVERY_MS) return;
    lastMadeRoom = now;
    server.closeIdleConnections();
  });
  // A socket with a response under way (pipelined requests may queue several) cannot take a
  // status line of ours in the middle of one.
  const answering = new WeakMap<Socket, number>();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    answering.set(socket, (answering.get(socket) ?? 0) + 1);
    let done = false;
    const finished = (): void => {
      if (done) return;
      done = true;
      const left = (answering.get(socket) ?? 1) - 1;
      if (left > 0) answering.set(socket, left);
      else answering.delete(socket);
    };
    response.once('finish', finished);
    response.once('close', finished);
  });
  const refused = new WeakSet<Socket>();
  server.on('clientError', (error: Error & { code?: unknown }, socket: Socket) => {
    if (refused.has(socket)) return;
    refused.add(socket);
    if (error.code === 'ECONNRESET' || !socket.writable || answering.has(socket)) {
      socket.destroy();
      return;
    }
    const [status, message] = describeClientError(error, limits);
    const body = `${message}\n`;
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\n` +
        'content-type: text/plain; charset=utf-8\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        'cache-control: no-store\r\nconnection: close\r\n\r\n' +
        body,
    );
    // Not destroyed at once: unread bytes at close would reset the connection before the
    // client reads the answer. The client closes its side, or the linger ends it.
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
    socket.once('end', () => socket.destroy());
  });
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
  applyLimits(server, limits);
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
