// The whole HTTP surface in one dispatcher over plain `node:http`: a fixed route table, one
// AbortSignal per request that fires when the client goes away, and one place that turns
// errors into JSON. Plain `node:http` rather than a framework because every byte of the
// request path is then visible, which is what a benchmark of telemetry overhead needs.

import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { HttpError } from './http-error.js';

/** What a route answers: a status and a JSON-serialisable body. */
export interface Reply {
  readonly status: number;
  readonly body: unknown;
}

/** One route. `path` segments written `:name` match one segment and become `params.name`. */
export interface Route {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly path: string;
  handle(req: IncomingMessage, signal: AbortSignal, params: Readonly<Record<string, string>>): Promise<Reply>;
}

/** Called with errors that are the server's fault (5xx other than HttpErrors), for the log. */
export type ErrorLog = (message: string) => void;

type Matcher = (path: string) => Record<string, string> | undefined;

function compile(pattern: string): Matcher {
  if (!pattern.includes('/:')) return (path) => (path === pattern ? {} : undefined);
  const names: string[] = [];
  const source = pattern.replace(/\/:(\w+)/g, (_, name: string) => {
    names.push(name);
    return '/([^/]+)';
  });
  const regex = new RegExp(`^${source}$`);
  return (path) => {
    const found = regex.exec(path);
    if (found === null) return undefined;
    return Object.fromEntries(names.map((name, i) => [name, found[i + 1] ?? '']));
  };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(payload);
}

/** Builds the request listener for a route table. */
export function createRequestListener(routes: readonly Route[], logError: ErrorLog): RequestListener {
  const index = routes.map((route) => `${route.method} ${route.path}`).join(', ');
  const table = routes.map((route) => ({ route, match: compile(route.path) }));
  return (req, res) => {
    const controller = new AbortController();
    // `close` before the response ended means the client went away: abort whatever the request is doing.
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    dispatch(req, res, controller.signal).catch((error: unknown) => {
      logError(`dispatch failed: ${String(error)}`);
      res.destroy();
    });
  };

  async function dispatch(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
    // The path is the request target up to its query, compared byte for byte: never resolved
    // as a URL, so `//host/verify` or `/a/../verify` is no route rather than /verify.
    const target = req.url ?? '';
    const query = target.indexOf('?');
    const path = query < 0 ? target : target.slice(0, query);
    if (!path.startsWith('/')) {
      req.resume();
      send(res, 400, { error: `the request target ${JSON.stringify(target.slice(0, 200))} is not a path` });
      return;
    }
    const candidates = table.filter((entry) => entry.match(path) !== undefined).map((entry) => entry.route);
    const found = table.find((entry) => entry.route.method === req.method && entry.match(path) !== undefined);
    if (found === undefined) {
      req.resume();
      if (candidates.length > 0) {
        const allow = candidates.map((candidate) => candidate.method).join(', ');
        send(res, 405, { error: `${req.method} is not allowed on ${path}; use ${allow}` }, { allow });
      } else {
        send(res, 404, {
          error: `no route for ${req.method} ${JSON.stringify(path.slice(0, 200))}; the routes are: ${index}`,
        });
      }
      return;
    }
    try {
      const reply = await found.route.handle(req, signal, found.match(path) ?? {});
      send(res, reply.status, reply.body);
    } catch (error) {
      if (signal.aborted) return; // nobody is listening; the operation already recorded `cancelled`
      if (error instanceof HttpError) {
        // A body we refused unread: close the connection rather than read the rest of it.
        const headers = error.status === 413 ? { ...error.headers, connection: 'close' } : error.headers;
        send(res, error.status, { error: error.message }, headers);
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      logError(`${req.method} ${path} failed: ${message}`);
      send(res, 500, { error: `internal error: ${message}` });
    }
  }
}
