// How long and how many: the bounds a resources server puts on its clients, all of them
// node:http's own. Node refuses slow headers and slow requests (408), oversized headers (431)
// and malformed requests (400) itself, closes idle keep-alive connections, and drops
// connections beyond `server.maxConnections` (set where the server is made). The one setting chosen here is how often Node looks
// for expired deadlines: every 30 s by default, so a "5 s" headers timeout could hold a slow
// client for 35 s; a quarter of the shortest deadline keeps each within a second of what it says.

import type { ServerOptions } from 'node:http';

/** The client bounds of one server. */
export interface HttpLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
}

/** Request headers larger than this are refused with 431 (Node's default, stated). */
const MAX_HEADER_SIZE = 16 * 1024;

/** Options for `createServer`: the deadlines and the header size. */
export function httpServerOptions(limits: HttpLimits): ServerOptions {
  const shortest = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.max(25, Math.floor(shortest / 4))),
    maxHeaderSize: MAX_HEADER_SIZE,
  };
}
