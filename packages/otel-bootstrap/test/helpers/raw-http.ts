// HTTP by hand over a TCP socket, for tests that play a misbehaving client: send half a
// request, trickle bytes, keep a connection open, and see exactly what the server does with
// the socket (answers, ends it, drops it). Everything waits for socket events, never a timer.

import { connect, type Socket } from 'node:net';

/** A raw client connection and what arrived on it. */
export interface RawClient {
  readonly socket: Socket;
  /** Every byte received so far, as latin1 text. */
  received(): string;
  /** Resolves once the server ended its side (`end`) or the socket closed, whichever first. */
  readonly ended: Promise<void>;
  /** Resolves once the socket is fully closed; `hadError` when it closed by a reset. */
  readonly closed: Promise<{ hadError: boolean }>;
  /** Resolves with `received()` once `test` accepts it (checked on every chunk). */
  until(test: (text: string) => boolean): Promise<string>;
}

/** Connects to the host and port of `url`; resolves once the TCP connection is established. */
export function openRaw(url: string): Promise<RawClient> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let text = '';
    const waiters = new Set<() => void>();
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      for (const waiter of [...waiters]) waiter();
    });
    socket.on('error', () => {
      // A reset or a refused write; `closed` reports it.
    });
    const closed = new Promise<{ hadError: boolean }>((done) => socket.once('close', (hadError) => done({ hadError })));
    const ended = new Promise<void>((done) => {
      socket.once('end', () => done());
      socket.once('close', () => done());
    });
    const until = (test: (text: string) => boolean): Promise<string> =>
      new Promise((done, fail) => {
        const check = (): void => {
          if (test(text)) {
            waiters.delete(check);
            done(text);
          }
        };
        waiters.add(check);
        socket.once('close', () => {
          if (!waiters.has(check)) return;
          waiters.delete(check);
          if (test(text)) done(text);
          else fail(new Error(`the connection closed before the expected data; got ${JSON.stringify(text)}`));
        });
        check();
      });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve({ socket, received: () => text, ended, closed, until });
    });
    socket.once('error', reject);
  });
}

/** One HTTP response, parsed. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Whether `text` holds a complete response with a `content-length` body (or none, for HEAD),
 * or Node's own refusal: a status line and `Connection: close`, no body.
 */
function complete(text: string, head: boolean): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return false;
  if (head) return true;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
  if (length === null) return /^HTTP\/1\.1 4\d\d [^\r]*\r\nConnection: close\r\n\r\n$/i.test(text);
  return text.length - (end + 4) >= Number(length[1]);
}

/** Parses the first response in `text` (one with a `content-length`, or a HEAD answer). */
export function parseResponse(text: string, head = false): RawResponse {
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = head ? 0 : Number(headers['content-length'] ?? '0');
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: Buffer.from(text.slice(end + 4, end + 4 + length), 'latin1').toString('utf8'),
  };
}

/**
 * Every complete response at the start of `text`, in order: each one's head and its whole
 * `content-length` body. A response still arriving, and anything after it, is left out.
 */
export function parseResponses(text: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    const length = /\r\ncontent-length: *(\d+)/i.exec(rest.slice(0, end));
    if (length === null) break;
    const size = end + 4 + Number(length[1]);
    if (rest.length < size) break;
    responses.push(parseResponse(rest.slice(0, size)));
    rest = rest.slice(size);
  }
  return responses;
}

/** Waits for one complete response on `client` (the first one it received). */
export async function readResponse(client: RawClient, head = false): Promise<RawResponse> {
  return parseResponse(await client.until((text) => complete(text, head)), head);
}

/** A keep-alive GET (or another method) of `path`, as a scraper sends it. */
export function requestText(path: string, method = 'GET'): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n`;
}
