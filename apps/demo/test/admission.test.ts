// Admission control against a real server process with its default queue bounds: a flood of
// 3,000 connections each asking for a hanging verify cannot make a normal request wait —
// it is answered (200 or OVERLOADED_STATUS) within a second — every refusal is an OVERLOADED_STATUS with Retry-After and
// a JSON body, refusals are counted (the server's gate, the metered limit's
// gym.concurrency.* counters and the operations' queue counts agree), and only
// verifications that ran to a result move gym.verify.success_rate.

import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OVERLOADED_STATUS } from '../src/http-error.js';
import { parsePrometheusText } from '../src/prometheus-text.js';
import { freePort } from './support/free-port.js';
import { prometheusEnv, startServer, type TestServer, terminate, waitFor } from './support/processes.js';

const FLOOD = 3_000;
/** Connections opened at once; the next batch waits for these to connect, so the flood never overruns the listen backlog. */
const BATCH = 200;

let server: TestServer;

beforeAll(async () => {
  server = await startServer(['--name', 'flooded', '--verify-limit', '2'], prometheusEnv(await freePort()));
}, 60_000);

afterAll(async () => {
  await terminate(server?.process.child);
});

interface GateState {
  active: number;
  queued: number;
  maxQueued: number;
  peakQueued: number;
  admitted: number;
  rejected: number;
  timedOut: number;
  cancelled: number;
}

async function verifyGate(): Promise<GateState> {
  return ((await (await fetch(`${server.url}/limits`)).json()) as { verify: GateState }).verify;
}

async function scrape(): Promise<ReturnType<typeof parsePrometheusText>> {
  return parsePrometheusText(await (await fetch(server.metrics ?? '')).text());
}

function verifyCount(samples: ReturnType<typeof parsePrometheusText>, name: string, outcome?: string): number {
  return samples
    .filter(
      (sample) =>
        sample.name === name &&
        sample.labels.nemo_gym_resources_operation === 'verify' &&
        (outcome === undefined || sample.labels.nemo_gym_resources_operation_outcome === outcome),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

describe('a flood of hanging verifies', () => {
  const sockets: Socket[] = [];
  const statuses = new Map<number, number>();
  let answered = 0;
  let firstRefusal = '';
  let normalStatus = 0;

  afterAll(() => {
    for (const socket of sockets) socket.destroy();
  });

  it('cannot keep a normal verify waiting: it is answered within 1 s', async () => {
    const { port } = new URL(server.url);
    const body = JSON.stringify({ answer: 'a', expected: 'a', mode: 'hang' });
    const request =
      'POST /verify HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n' +
      `content-length: ${body.length}\r\n\r\n${body}`;
    const open = (): Promise<void> =>
      new Promise((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(request);
          resolve();
        });
        let first = true;
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => {
          if (!first) return;
          first = false;
          answered++;
          const status = Number(chunk.slice(9, 12));
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status === OVERLOADED_STATUS && firstRefusal === '') firstRefusal = chunk;
        });
        socket.on('error', () => resolve());
        sockets.push(socket);
      });
    for (let sent = 0; sent < FLOOD; sent += BATCH) {
      await Promise.all(Array.from({ length: Math.min(BATCH, FLOOD - sent) }, open));
    }
    // The flood stands: every hanging verify was read; all but the ones holding or waiting for a slot were refused.
    const gate = await waitFor(
      'the server to have read the whole flood',
      async () => {
        const state = await verifyGate();
        return state.admitted + state.rejected + state.timedOut + state.queued >= FLOOD ? state : undefined;
      },
      60_000,
      50,
    );
    expect(gate.queued).toBeLessThanOrEqual(gate.maxQueued);
    // The peak is the metered limit's own queue count: the flood filled the queue, never beyond.
    expect(gate.peakQueued).toBe(gate.maxQueued);

    // The wait is the server's: from the moment the request is written on an open connection to
    // its first response byte, so the time this (busy) process needs to open a connection is
    // not charged to the server. The second is the product's promise and is kept as such.
    const client = await new Promise<Socket>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
      socket.once('error', reject);
    });
    sockets.push(client);
    client.setEncoding('utf8');
    const answer = new Promise<{ at: number; head: string }>((resolve) =>
      client.once('data', (chunk: string) => resolve({ at: performance.now(), head: chunk })),
    );
    const normal = JSON.stringify({ answer: 'b', expected: 'b', workMs: 0 });
    const started = performance.now();
    client.write(
      'POST /verify HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n' +
        `content-length: ${normal.length}\r\n\r\n${normal}`,
    );
    const { at, head } = await answer;
    const elapsed = at - started;
    normalStatus = Number(head.slice(9, 12));
    expect([200, OVERLOADED_STATUS]).toContain(normalStatus);
    expect(elapsed).toBeLessThan(1_000);
  }, 90_000);

  it('refuses with OVERLOADED_STATUS, Retry-After and a JSON reason', async () => {
    await waitFor('every flood request to be answered', () => (answered >= FLOOD ? true : undefined), 60_000, 50);
    expect(statuses.get(OVERLOADED_STATUS) ?? 0).toBeGreaterThan(FLOOD * 0.9);
    // Nothing else: a hang that got a slot ends as a 504 timeout; the rest were refused.
    expect([...statuses.keys()].every((status) => status === OVERLOADED_STATUS || status === 504)).toBe(true);
    const [head = '', body = ''] = firstRefusal.split('\r\n\r\n');
    expect(head.toLowerCase()).toContain('retry-after: 1\r\n');
    expect(head.toLowerCase()).toContain('content-type: application/json');
    expect((JSON.parse(body) as { error: string }).error).toMatch(/^overloaded: .*\(limit verify_slots\)/);
  }, 90_000);

  it('counts every refusal: the gate and the Prometheus queue counts agree, and the queue drains to 0', async () => {
    const gate = await waitFor(
      'the queue and the slots to drain',
      async () => {
        const state = await verifyGate();
        return state.queued === 0 && state.active === 0 ? state : undefined;
      },
      30_000,
      100,
    );
    expect(gate.rejected).toBeGreaterThan(0);
    expect(gate.timedOut).toBeGreaterThan(0);
    const samples = await scrape();
    const asked = verifyCount(samples, 'gym_resources_operation_queue_duration_ms_count');
    const ran = verifyCount(samples, 'gym_resources_operation_duration_ms_count');
    expect(ran).toBe(gate.admitted);
    // A refusal never waited, so it records no queue wait; timed-out and cancelled waits do.
    expect(asked - ran).toBe(gate.timedOut + gate.cancelled);
    // The metered limit exports the same admission counts (gym.concurrency.*), per limit name.
    const concurrency = (name: string): number | undefined =>
      samples.find((sample) => sample.name === name && sample.labels.nemo_gym_concurrency_limit_name === 'verify_slots')
        ?.value;
    expect(concurrency('gym_concurrency_admission_rejected_total')).toBe(gate.rejected);
    expect(concurrency('gym_concurrency_admission_timeouts_total')).toBe(gate.timedOut);
    expect(concurrency('gym_concurrency_queue_depth')).toBe(0);
    expect(concurrency('gym_concurrency_active')).toBe(0);
    // The refusals the clients saw are exactly the refusals.
    expect((statuses.get(OVERLOADED_STATUS) ?? 0) + (normalStatus === OVERLOADED_STATUS ? 1 : 0)).toBe(
      gate.rejected + gate.timedOut,
    );
  }, 40_000);

  it('moves gym.verify.success_rate only with verifications that ran to a result', async () => {
    const samples = await scrape();
    const ok = verifyCount(samples, 'gym_resources_operation_duration_ms_count', 'ok');
    const timeout = verifyCount(samples, 'gym_resources_operation_duration_ms_count', 'timeout');
    const crashed = verifyCount(samples, 'gym_resources_operation_duration_ms_count', 'crashed');
    const rate = samples.find((sample) => sample.name === 'gym_verify_success_rate')?.value;
    expect(timeout).toBeGreaterThan(0);
    // Thousands of refusals would drag it to ~0 if they counted; it is exactly ok / (ok + timeout + crashed).
    expect(rate).toBeCloseTo(ok / (ok + timeout + crashed), 10);
  });
});
