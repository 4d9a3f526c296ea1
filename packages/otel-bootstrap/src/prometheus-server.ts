// The Prometheus endpoint's HTTP server: the exporter's own request handler
// (`PrometheusExporter` with `preventServerStart`) on a `node:http` server of ours, so a listen
// error (EADDRINUSE) is a setup failure and port 0 works. Node's own bounds do most of the work
// (header, request and keep-alive deadlines, checked every quarter of the shorter one instead
// of every 30 s; a socket timeout for a client that stops reading; header count and size).
// Three parts are ours, because Node has no switch for them (see docs/otel-bootstrap.md):
// - the connection cap: past `maxConnections`, a connection's first request closes the oldest
//   connection that has not sent one (else the oldest whose request has not ended, else the
//   oldest idle one); past twice the cap a newcomer does so at accept. Slow clients are left
//   alone until a request needs their place: closing them at accept let clients that reconnect
//   at once churn thousands of sockets a second and grew V8's young generation by 140 MiB;
// - a scrape has no body: a request that announces one (`Transfer-Encoding`, or a
//   `Content-Length` other than 0) is answered 400 and its connection closed, so a client that
//   sends a complete head and then trickles a body never holds a place as a served scraper;
// - one request at a time per connection (at most 8 wait; more closes it), so a client that
//   pipelines and never reads holds one answer;
// - at most one rendering at a time, shared by the scrapes that arrive while it is made.
// Loaded with `import()` from sdk-pipeline.ts, only when the `prometheus` exporter is in use.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { PrometheusEndpointLimits } from './types.js';

type Limits = Readonly<Required<PrometheusEndpointLimits>>;

/** The one path served. */
const METRICS_PATH = '/metrics';
/** The Prometheus text format the exporter writes (0.0.4), named fully; the exporter says only `text/plain`. */
const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
/** Headers kept per request: a scraper sends a handful; the rest are not parsed into objects. */
const MAX_HEADERS_COUNT = 32;
/** Header bytes per request (Node's default, fixed here so a process-wide flag cannot raise it). */
const MAX_HEADER_SIZE = 16 * 1024;

/** Pipelined requests that may wait on one connection while it is answered. */
const MAX_WAITING_PER_CONNECTION = 8;

/** Whatever serves one scrape into `response`: the exporter's public request handler. */
export interface MetricsHandler {
  getMetricsRequestHandler(request: IncomingMessage, response: ServerResponse): void;
}

/** How often Node looks for expired header and request deadlines: a quarter of the shorter one, 25 ms to 1 s. */
function checkingIntervalMs(limits: Limits): number {
  return Math.min(1_000, Math.max(25, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));
}

function answer(response: ServerResponse, status: number, body: string, headers: Record<string, string>): void {
  response.writeHead(status, { 'content-length': String(Buffer.byteLength(body)), ...headers });
  response.end(body);
}

/** A refusal: one line of plain text. */
function refuse(response: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  answer(response, status, `${text}\n`, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
}

/**
 * At most one rendering at a time, and none older than the request it answers: while one is
 * made, the scrapes that arrive wait for it and then share the next one. The exporter's own
 * handler renders into a stand-in for the response (it sets the status and the content type,
 * then ends with the text); it never fails (a failed collection is rendered as a comment).
 */
function sharedRendering(handler: MetricsHandler): (request: IncomingMessage) => Promise<string> {
  let current: Promise<string> | undefined;
  let next: Promise<string> | undefined;
  const start = (request: IncomingMessage): Promise<string> => {
    const text = new Promise<string>((resolve) => {
      const standIn = {
        statusCode: 200,
        setHeader: () => standIn,
        end: (chunk?: unknown) => resolve(chunk === undefined ? '' : String(chunk)),
      };
      handler.getMetricsRequestHandler(request, standIn as unknown as ServerResponse);
    });
    current = text;
    void text.then(() => {
      if (current === text) current = undefined;
    });
    return text;
  };
  return (request) => {
    if (current === undefined) return start(request);
    next ??= current.then(() => {
      next = undefined;
      return start(request);
    });
    return next;
  };
}

/** True when the request announces a body: chunked (any `Transfer-Encoding`), or a `Content-Length` other than 0. */
function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The route: GET or HEAD of exactly `/metrics` (a query string is ignored; `//host/metrics` is no route). */
function route(
  render: (request: IncomingMessage) => Promise<string>,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  if ((request.url ?? '').split('?', 1)[0] !== METRICS_PATH) {
    refuse(response, 404, `not found: the metrics are at ${METRICS_PATH}`);
  } else if (request.method !== 'GET' && request.method !== 'HEAD') {
    refuse(response, 405, `method not allowed: ${METRICS_PATH} answers GET and HEAD`, { allow: 'GET, HEAD' });
  } else if (hasBody(request)) {
    // `Connection: close`: node:http closes the connection once the answer is written.
    refuse(response, 400, `bad request: a scrape of ${METRICS_PATH} has no body`, { connection: 'close' });
  } else {
    void render(request).then((text) => {
      if (!response.destroyed) answer(response, 200, text, { 'content-type': EXPOSITION_CONTENT_TYPE });
    });
  }
}

/** Per connection: whether an answer is under way, what waits behind it, whether it ever sent a request and whether its last one ended. */
interface Connection {
  busy: boolean;
  requested: boolean;
  ended: boolean;
  readonly waiting: [IncomingMessage, ServerResponse][];
}

/**
 * The connection cap with eviction, and one request at a time per connection (see the top of
 * this file). `serve` answers one request.
 */
function admit(server: Server, cap: number, serve: (request: IncomingMessage, response: ServerResponse) => void): void {
  // Insertion order is age.
  const open = new Map<Socket, Connection>();
  const evictFor = (keep: Socket): boolean => {
    let silent: Socket | undefined;
    let unended: Socket | undefined;
    let idle: Socket | undefined;
    for (const [other, state] of open) {
      if (other === keep) continue;
      if (!state.requested) {
        silent = other;
        break;
      }
      if (!state.ended) unended ??= other;
      else if (!state.busy) idle ??= other;
    }
    const victim = silent ?? unended ?? idle;
    if (victim === undefined) return false;
    open.delete(victim);
    victim.destroy();
    return true;
  };
  server.on('connection', (socket: Socket) => {
    open.set(socket, { busy: false, requested: false, ended: true, waiting: [] });
    socket.once('close', () => open.delete(socket));
    if (open.size > 2 * cap && !evictFor(socket)) {
      open.delete(socket);
      socket.destroy();
    }
  });
  const next = (socket: Socket, state: Connection): void => {
    const waiting = state.waiting.shift();
    if (waiting === undefined) {
      state.busy = false;
      return;
    }
    const [request, response] = waiting;
    state.busy = true;
    response.once('close', () => next(socket, state));
    serve(request, response);
  };
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const state = open.get(socket);
    if (state === undefined) {
      // Already evicted or closed: nothing to answer on.
      socket.destroy();
      return;
    }
    state.ended = false;
    request.once('end', () => {
      state.ended = true;
    });
    // Read to its end (a bodiless request ends at once), so that its end is seen.
    request.resume();
    if (!state.requested) {
      state.requested = true;
      if (open.size > cap) evictFor(socket);
    }
    if (state.waiting.length >= MAX_WAITING_PER_CONNECTION) {
      socket.destroy();
      return;
    }
    state.waiting.push([request, response]);
    if (!state.busy) next(socket, state);
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
  const server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(limits),
    maxHeaderSize: MAX_HEADER_SIZE,
  });
  const render = sharedRendering(handler);
  admit(server, limits.maxConnections, (request, response) => route(render, request, response));
  server.maxHeadersCount = MAX_HEADERS_COUNT;
  // No progress for longer than the request timeout while a request is read or answered ends
  // the socket (a client that stops reading); two checking intervals later than the
  // deadlines, so a silent client gets its 408 first.
  server.timeout = limits.requestTimeoutMs + 2 * checkingIntervalMs(limits);
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
