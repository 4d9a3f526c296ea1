// The server's bounds on slow, idle, malformed and numerous clients, against a real server
// process with small configured timeouts (so the test is quick): each deadline holds within
// Node's checking interval of what it says, every parser-level refusal gets node:http's own
// status, the connection cap holds and frees a slot when a connection ends, paths match exactly,
// the media type is exactly application/json, and malformed UTF-8 is refused. Upper bounds
// are generous (a slow machine passes) yet far below what Node's 30 s checking interval
// would give, so each test fails without its bound.

import { readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_VERIFY_TIMEOUT_MS } from '../src/server-config.js';
import { runVerifier } from '../src/verifier.js';
import { startServer, type TestServer, terminate, waitFor } from './support/processes.js';

const OFF: NodeJS.ProcessEnv = { ...process.env, NEMO_GYM_OTEL_ENABLED: '0', OTEL_EXPORTER_OTLP_ENDPOINT: '' };
const HEADERS_MS = 400;
const REQUEST_MS = 800;
const KEEP_ALIVE_MS = 300;
/** Far below Node's default checking interval (30 s), far above any sane scheduling delay. */
const SLACK_MS = 2_500;

let server: TestServer;
let capped: TestServer;

beforeAll(async () => {
  [server, capped] = await Promise.all([
    startServer(
      [
        '--name',
        'hardening',
        '--headers-timeout-ms',
        String(HEADERS_MS),
        '--request-timeout-ms',
        String(REQUEST_MS),
        '--keep-alive-timeout-ms',
        String(KEEP_ALIVE_MS),
      ],
      OFF,
    ),
    startServer(
      [
        '--name',
        'capped',
        '--max-connections',
        '4',
        '--keep-alive-timeout-ms',
        '30000',
        '--headers-timeout-ms',
        '30000',
        '--request-timeout-ms',
        '30000',
      ],
      OFF,
    ),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([terminate(server?.process.child), terminate(capped?.process.child)]);
});

/** A raw connection that collects what the server sends and notes when it closes. */
interface Raw {
  readonly socket: Socket;
  received: string;
  /**
   * `performance.now()` just before the connection was asked for. The server's header and
   * request clocks start when it accepts the connection, which cannot be earlier, so a
   * duration measured from here is never shorter than the server's, however late this
   * (busy) process gets to run its `connect` callback.
   */
  readonly opened: number;
  readonly closed: Promise<number>;
}

async function rawConnection(url: string): Promise<Raw> {
  const { port } = new URL(url);
  const opened = performance.now();
  const socket = connect(Number(port), '127.0.0.1');
  const raw: Raw = {
    socket,
    received: '',
    opened,
    closed: new Promise((resolve) => socket.once('close', () => resolve(performance.now()))),
  };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    raw.received += chunk;
  });
  socket.on('error', () => {});
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return raw;
}

describe('slow and idle clients', () => {
  it('answers headers that do not arrive within the headers timeout with 408 and closes', async () => {
    const raw = await rawConnection(server.url);
    raw.socket.write('POST /verify HTTP/1.1\r\nhost: x\r\ncontent-type: appl');
    const elapsed = (await raw.closed) - raw.opened;
    expect(raw.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(elapsed).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(elapsed).toBeLessThan(HEADERS_MS + SLACK_MS);
  });

  it('closes a connection that never sends a byte within the headers timeout', async () => {
    const raw = await rawConnection(server.url);
    const elapsed = (await raw.closed) - raw.opened;
    expect(elapsed).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(elapsed).toBeLessThan(HEADERS_MS + SLACK_MS);
  });

  it('answers a body that trickles past the request timeout with 408 and closes', async () => {
    const raw = await rawConnection(server.url);
    raw.socket.write('POST /tool HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n');
    // One byte every 50 ms: never idle long enough for the headers deadline, never done.
    const drip = setInterval(() => raw.socket.write(' '), 50);
    try {
      const elapsed = (await raw.closed) - raw.opened;
      expect(raw.received).toMatch(/^HTTP\/1\.1 408 /);
      expect(elapsed).toBeGreaterThanOrEqual(REQUEST_MS - 50);
      expect(elapsed).toBeLessThan(REQUEST_MS + SLACK_MS);
    } finally {
      clearInterval(drip);
    }
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const raw = await rawConnection(server.url);
    raw.socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    await waitFor('the answer', () => (raw.received.includes('"ok"') ? true : undefined), 5_000, 10);
    const answered = performance.now();
    const idle = (await raw.closed) - answered;
    expect(raw.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(idle).toBeLessThan(KEEP_ALIVE_MS + SLACK_MS);
  });
});

describe('parser-level errors are refused by node:http', () => {
  it.each([
    ['a malformed request line', 400, 'GARBAGE\r\n\r\n'],
    ['headers over 16 KiB', 431, `GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['a bad chunk size', 400, 'POST /tool HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'],
  ])('%s → %i, and the server goes on', async (_what, status, payload) => {
    const raw = await rawConnection(server.url);
    raw.socket.write(payload);
    await raw.closed;
    expect(raw.received).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

describe('request targets, media types and encodings', () => {
  const post = (path: string, body: string | Uint8Array, contentType = 'application/json') =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
  const words = JSON.stringify({ tool: 'word_count', input: 'one two' });

  it('matches paths exactly: //host/path and /path/ are no route, a query string is allowed', async () => {
    const protocolRelative = await post('//evil.example/tool', words);
    expect(protocolRelative.status).toBe(404);
    expect(((await protocolRelative.json()) as { error: string }).error).toContain('"//evil.example/tool"');
    expect((await post('/tool/', words)).status).toBe(404);
    expect((await post('/tool?trace=1', words)).status).toBe(200);
  });

  it.each([
    ['application/json', 200],
    ['application/json; charset=utf-8', 200],
    ['Application/JSON ; charset=UTF-8', 200],
    ['application/json-patch+json', 415],
    ['application/jsonx', 415],
    ['text/json', 415],
  ])('content-type %j → %i', async (contentType, status) => {
    expect((await post('/tool', words, contentType)).status).toBe(status);
  });

  it('refuses malformed UTF-8 with 400 instead of replacing it', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"tool":"word_count","input":"a'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    const answer = await post('/tool', bytes);
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: string }).error).toBe('body is not valid UTF-8');
  });
});

describe('the connection cap', () => {
  it('drops a connection beyond the cap; a slot frees when a connection ends', async () => {
    const held: Raw[] = [];
    for (let i = 0; i < 4; i++) {
      const raw = await rawConnection(capped.url);
      raw.socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
      await waitFor('the answer', () => (raw.received.includes('"ok"') ? true : undefined), 5_000, 10);
      held.push(raw);
    }
    // The fifth is over the cap: closed without an answer, while the four idle ones stay open.
    const over = await rawConnection(capped.url);
    over.socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    await over.closed;
    expect(over.received).toBe('');
    // One of the four ends: the server counts it gone, and the next connection gets in.
    held[0]?.socket.destroy();
    await held[0]?.closed;
    const status = await waitFor(
      'a connection under the cap',
      async () => (await fetch(`${capped.url}/healthz`)).status,
      10_000,
      50,
    );
    expect(status).toBe(200);
    for (const raw of held) raw.socket.destroy();
  }, 15_000);
});

describe("the verifier's own hang", () => {
  /** Command lines of this process's children. */
  function children(): string[][] {
    return readdirSync('/proc/self/task').flatMap((task) =>
      readFileSync(`/proc/self/task/${task}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter((pid) => pid !== '')
        .map((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
          } catch {
            return [];
          }
        }),
    );
  }

  it('outlasts the longest allowed timeout, so a hang always ends as timeout', async () => {
    const controller = new AbortController();
    const pending = runVerifier(
      { answer: 'a', expected: 'a', workMs: 0, mode: 'hang' },
      MAX_VERIFY_TIMEOUT_MS,
      controller.signal,
    );
    pending.catch(() => {});
    const sleep = await waitFor(
      'the hanging verifier',
      () => children().find((argv) => argv[0] === 'sleep'),
      5_000,
      20,
    );
    expect(Number(sleep[1]) * 1000).toBeGreaterThan(MAX_VERIFY_TIMEOUT_MS);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('is killed at its timeout and reported as timeout', async () => {
    const result = await runVerifier({ answer: 'a', expected: 'a', workMs: 0, mode: 'hang' }, 200);
    expect(result).toEqual({ kind: 'timeout', timeoutMs: 200 });
  });
});
