// How long and how many: the bounds a resources server puts on its clients. Node checks its
// header and request deadlines only every `connectionsCheckingInterval` (30 s by default), so
// a "5 s" headers timeout could hold a slow client for 35 s; here the interval is a fraction of
// the smallest deadline, so each deadline holds within a second of what it says. Every
// refusal at the parser level (malformed request, headers too large, too slow) gets a JSON
// body like every other refusal, not a bare status line.

import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';

/** The client bounds of one server. */
export interface HttpLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
}

/** How often Node looks for expired header and request deadlines: a quarter of the shortest, 25 ms to 1 s. */
export function checkingIntervalMs(limits: HttpLimits): number {
  return Math.min(1_000, Math.max(25, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));
}

/** Options for `createServer` that carry the deadlines. */
export function httpServerOptions(limits: HttpLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(limits),
    keepAliveTimeout: limits.keepAliveTimeoutMs,
  };
}

/** How long a refused connection may linger so its client can read the answer before the socket is destroyed. */
const LINGER_MS = 1_000;
/** Closing idle connections to make room is done at most this often. */
const MAKE_ROOM_EVERY_MS = 250;

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** The status and sentence for an error Node's HTTP parser (or its deadline check) raised. */
export function describeClientError(error: Error & { code?: unknown }, limits: HttpLimits): [number, string] {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [
        408,
        `the request did not arrive in time (headers within ${limits.headersTimeoutMs} ms, the whole request within ${limits.requestTimeoutMs} ms)`,
      ];
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'the request headers are too large'];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [400, 'the chunk extensions are too large'];
    default:
      return [400, `malformed HTTP request (${typeof error.code === 'string' ? error.code : 'parse error'})`];
  }
}

/** The connection cap and the JSON parser-error answers (the deadlines come with `httpServerOptions`). */
export function hardenServer(server: Server, limits: HttpLimits): void {
  server.maxConnections = limits.maxConnections;
  // At the cap, a new connection is dropped; idle keep-alive connections are then closed, so
  // a client that tries again gets in and a pile of idle sockets cannot lock everyone out.
  let lastMadeRoom = Number.NEGATIVE_INFINITY;
  server.on('drop', () => {
    const now = performance.now();
    if (now - lastMadeRoom < MAKE_ROOM_EVERY_MS) return;
    lastMadeRoom = now;
    server.closeIdleConnections();
  });
  const answered = new WeakSet<Socket>();
  server.on('clientError', (error: Error & { code?: unknown }, socket: Socket) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
      socket.destroy();
      return;
    }
    const [status, message] = describeClientError(error, limits);
    const body = JSON.stringify({ error: message });
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\n` +
        'content-type: application/json; charset=utf-8\r\n' +
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

/** Open connections right now. */
export function connectionCount(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? -1 : count)));
}
