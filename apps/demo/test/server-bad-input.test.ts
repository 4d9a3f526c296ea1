// Bad input against a real server process (the built dist/server.js) with telemetry on:
// every route answers a clear 4xx, the server survives all of it, a client that leaves
// mid-request gives its slot back, and nothing a client sends reaches a metric label.

import { request } from 'node:http';
import { connect } from 'node:net';
import { EXECUTORS, OPERATIONS, OUTCOMES } from '@gym/constants';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parsePrometheusText } from '../src/prometheus-text.js';
import { freePort } from './support/free-port.js';
import { isAlive, prometheusEnv, startServer, type TestServer, terminate, waitFor } from './support/processes.js';

let server: TestServer;

beforeAll(async () => {
  // One verify slot and a long verifier timeout: only a cancellation can free a hung verifier's
  // slot quickly. A long queue deadline too: a queued verify stays queued until its client
  // leaves, however long a scrape on a loaded machine takes to see it there.
  server = await startServer(
    [
      '--name',
      'bad-input',
      '--verify-limit',
      '1',
      '--verify-timeout-ms',
      '20000',
      '--verify-queue-timeout-ms',
      '20000',
      '--max-sandboxes',
      '1',
    ],
    prometheusEnv(await freePort()),
  );
}, 60_000);

afterAll(async () => {
  await terminate(server?.process.child);
});

interface Answer {
  status: number;
  body: { error?: string } & Record<string, unknown>;
  headers: Headers;
}

async function send(method: string, path: string, body?: string, contentType = 'application/json'): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : JSON.parse(text), headers: response.headers };
}

const post = (path: string, body: unknown): Promise<Answer> => send('POST', path, JSON.stringify(body));

/** Raw HTTP/1.1 exchange, for requests fetch will not send (lying lengths, early hang-ups). */
function rawExchange(payload: string): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('end', () => resolve(received));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
    socket.write(payload);
  });
}

interface Gate {
  limit: number;
  active: number;
  queued: number;
  cancelled: number;
}

async function limits(): Promise<{
  verify: Gate;
  tool: Gate;
  judge: Gate;
  sandboxes: { live: number; limit: number };
}> {
  const response = await fetch(`${server.url}/limits`);
  return response.json() as never;
}

async function scrape() {
  if (server.metrics === null) throw new Error('the server reported no Prometheus endpoint');
  return parsePrometheusText(await (await fetch(server.metrics)).text());
}

const validBodies: Record<string, unknown> = {
  '/verify': { answer: 'a', expected: 'a', workMs: 0 },
  '/tool': { tool: 'sha256', input: 'x', rounds: 1 },
  '/judge': { prompt: 'why', response: 'because' },
  '/sandboxes': { cpu: 0, memoryMib: 0, lifetimeMs: 500 },
};

describe('routes and methods', () => {
  it('answers an unknown route with 404 and the list of routes', async () => {
    const answer = await post('/nope', {});
    expect(answer.status).toBe(404);
    expect(answer.body.error).toContain('no route for POST "/nope"');
    expect(answer.body.error).toContain('POST /verify');
  });

  it('answers a known path with the wrong method with 405 and an Allow header', async () => {
    const answer = await send('GET', '/verify');
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST');
    expect(answer.body.error).toContain('GET is not allowed on /verify');
  });

  it('answers an unknown sandbox id with 404 on GET and DELETE', async () => {
    for (const method of ['GET', 'DELETE']) {
      const answer = await send(method, '/sandboxes/does-not-exist');
      expect(answer.status).toBe(404);
      expect(answer.body.error).toContain('no live sandbox with id "does-not-exist"');
    }
  });

  it('answers a malformed request line with 400 and stays up', async () => {
    const reply = await rawExchange('GARBAGE\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect((await send('GET', '/healthz')).status).toBe(200);
  });
});

describe.each(Object.keys(validBodies))('POST %s', (path) => {
  it('accepts its valid body', async () => {
    const answer = await post(path, validBodies[path]);
    expect(answer.status).toBeLessThan(300);
    if (path === '/sandboxes') expect((await send('DELETE', `/sandboxes/${answer.body.id}`)).status).toBe(200);
  });

  it('refuses a body that is not JSON with 400', async () => {
    const answer = await send('POST', path, '{"answer": ');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(/^body is not valid JSON/);
  });

  it('refuses a body without a JSON content-type with 415', async () => {
    const answer = await send('POST', path, JSON.stringify(validBodies[path]), 'text/plain');
    expect(answer.status).toBe(415);
    expect(answer.body.error).toBe('content-type must be application/json (got "text/plain")');
  });

  it('refuses a JSON value that is not an object with 400', async () => {
    const answer = await send('POST', path, '[1, 2, 3]');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(/^invalid body: /);
  });

  it('refuses an unknown field with 400 naming it', async () => {
    const answer = await post(path, { ...(validBodies[path] as object), surprise: 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toContain('surprise');
  });

  it('refuses a declared oversized body with 413 before reading it', async () => {
    const answer = await send('POST', path, JSON.stringify({ pad: 'x'.repeat(70 * 1024) }));
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatch(/limit is 65536 bytes/);
    expect(answer.headers.get('connection')).toBe('close');
  });

  it('refuses an oversized chunked body (no declared length) with 413', async () => {
    const chunk = 'x'.repeat(16 * 1024);
    const chunks = Array.from({ length: 6 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    const reply = await rawExchange(
      `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`,
    );
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toContain('exceeds the limit of 65536 bytes');
  });
});

describe('wrong types and out-of-range values name the field', () => {
  const cases: [string, unknown, RegExp][] = [
    ['/verify', { answer: 42, expected: 'a' }, /answer: Invalid input: expected string, received number/],
    ['/verify', { answer: 'a', expected: 'a', workMs: 1e9 }, /workMs: Too big/],
    ['/verify', { answer: 'a', expected: 'a', mode: 'explode' }, /mode: Invalid option/],
    ['/verify', { answer: 'a\u0000b', expected: 'a' }, /answer: must not contain NUL characters/],
    ['/verify', { expected: 'a' }, /answer: Invalid input: expected string, received undefined/],
    ['/tool', { tool: 'rm -rf', input: 'x' }, /tool: Invalid discriminator value. Expected 'sha256' \| 'word_count'/],
    ['/tool', { tool: 'sha256', input: 'x', rounds: 0 }, /rounds: Too small/],
    ['/tool', { tool: 'sha256', input: 'x', rounds: 1.5 }, /rounds: Invalid input: expected int/],
    ['/judge', { prompt: '', response: 'x' }, /prompt: Too small/],
    ['/judge', { prompt: ['a'], response: 'x' }, /prompt: Invalid input: expected string, received array/],
    ['/sandboxes', { memoryMib: 100_000 }, /memoryMib: Too big/],
    ['/sandboxes', { cpu: 'all' }, /cpu: Invalid input: expected number, received string/],
  ];
  it.each(cases)('POST %s %j', async (path, body, message) => {
    const answer = await post(path, body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(message);
  });
});

describe('limits and leaks', () => {
  it('refuses a sandbox beyond the quota with 429 instead of queueing it', async () => {
    const first = await post('/sandboxes', { cpu: 0, memoryMib: 0, lifetimeMs: 5000 });
    expect(first.status).toBe(201);
    const second = await post('/sandboxes', { cpu: 0, memoryMib: 0, lifetimeMs: 5000 });
    expect(second.status).toBe(429);
    expect(second.body.error).toContain('maximum of 1 sandboxes');
    const sample = await send('GET', `/sandboxes/${first.body.id}`);
    expect(sample.status).toBe(200);
    // A real /proc reading of the sandbox process: resident memory in MiB.
    expect(sample.body.sample).toHaveProperty(['nemo.gym.sandbox.resource.memory_mib']);
    expect((await send('DELETE', `/sandboxes/${first.body.id}`)).status).toBe(200);
    expect(isAlive(first.body.pid as number)).toBe(false);
    expect((await limits()).sandboxes.live).toBe(0);
  });

  it('gives back the slot of a verify whose client disconnects, running or queued', async () => {
    const verifyLabel = (labels: Readonly<Record<string, string>>) => labels.nemo_gym_resources_operation === 'verify';
    const gauge = async (name: string) =>
      (await scrape()).find((sample) => sample.name === name && verifyLabel(sample.labels))?.value;
    const running = openRequest('/verify', { answer: 'a', expected: 'a', mode: 'hang' });
    await waitFor(
      'the hung verifier to hold the only slot',
      async () => ((await limits()).verify.active === 1 ? true : undefined),
      5_000,
    );
    const queued = openRequest('/verify', { answer: 'a', expected: 'a', workMs: 0 });
    await waitFor(
      'the second verify to wait in the queue',
      async () => ((await gauge('gym_resources_operation_queued')) === 1 ? true : undefined),
      5_000,
    );
    expect(await gauge('gym_resources_operation_active')).toBe(1);

    running.destroy();
    queued.destroy();
    // The verifier would hang past its 20 s timeout; only the cancellation can free the slot this soon.
    await waitFor(
      'the slot to be free again',
      async () => ((await limits()).verify.active === 0 ? true : undefined),
      5_000,
    );
    expect(await gauge('gym_resources_operation_queued')).toBe(0);
    expect(await gauge('gym_resources_operation_active')).toBe(0);
    const cancelled = (await scrape()).find(
      (sample) =>
        sample.name === 'gym_resources_operation_duration_ms_count' &&
        verifyLabel(sample.labels) &&
        sample.labels.nemo_gym_resources_operation_outcome === 'cancelled',
    );
    expect(cancelled?.value).toBeGreaterThanOrEqual(1);

    const next = await post('/verify', { answer: 'same', expected: 'same', workMs: 0 });
    expect(next.status).toBe(200);
    expect(next.body).toEqual({ passed: true, reward: 1 });
  });

  it('survives a client that leaves halfway through sending its body', async () => {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.setEncoding('utf8');
    await new Promise((resolve) => socket.once('connect', resolve));
    // `expect: 100-continue` makes the server say when the request has reached its route, which
    // is then reading the body: the client leaves at that point, not after a guessed sleep.
    const interim = new Promise<string>((resolve) => socket.once('data', resolve));
    socket.write(
      'POST /tool HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\nexpect: 100-continue\r\n\r\n',
    );
    expect(await interim).toMatch(/^HTTP\/1\.1 100 Continue\r\n/);
    socket.write('{"tool":');
    socket.destroy();
    const answer = await post('/tool', { tool: 'word_count', input: 'one two three' });
    expect(answer).toMatchObject({ status: 200, body: { words: 3 } });
    expect((await limits()).tool).toMatchObject({ active: 0, queued: 0 });
  });

  it('keeps every metric label inside its bounded set after all of the above', async () => {
    const samples = await scrape();
    const seen = { operation: new Set<string>(), executor: new Set<string>(), outcome: new Set<string>() };
    for (const { labels } of samples) {
      if (labels.nemo_gym_resources_operation !== undefined) seen.operation.add(labels.nemo_gym_resources_operation);
      if (labels.nemo_gym_resources_executor !== undefined) seen.executor.add(labels.nemo_gym_resources_executor);
      if (labels.nemo_gym_resources_operation_outcome !== undefined)
        seen.outcome.add(labels.nemo_gym_resources_operation_outcome);
    }
    expect(seen.operation.size).toBeGreaterThan(0);
    for (const value of seen.operation) expect(OPERATIONS).toContain(value);
    for (const value of seen.executor) expect(EXECUTORS).toContain(value);
    for (const value of seen.outcome) expect(OUTCOMES).toContain(value);
    expect(isAlive(server.pid)).toBe(true);
  });
});

/** A POST through its own socket, left open until `destroy()`: a client that can walk away. */
function openRequest(path: string, body: unknown): { destroy: () => void } {
  const payload = JSON.stringify(body);
  const req = request(`${server.url}${path}`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
  });
  req.on('error', () => undefined); // the destroy below is the point
  req.end(payload);
  return { destroy: () => req.destroy() };
}
