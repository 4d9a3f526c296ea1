// The stuck-limit fault: a verify with `stallMs` holds its slot without running for that long,
// beyond the verify timeout, so the calls behind it wait and the limit completes nothing; its
// client leaving ends the stall and gives the slot back. And `--stall-verifies-ms` drives it from
// the demo's command: during the window the verify limit of every server is held and its queue
// does not move, then verifies recover. Bounds are lower bounds only (a stall of 2 s takes at
// least 2 s on any machine).

import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { GateState } from '../src/admission.js';
import {
  type Captured,
  distFile,
  exited,
  prometheusEnv,
  spawnNode,
  startServer,
  type TestServer,
  terminate,
  waitFor,
} from './support/processes.js';

let server: TestServer | undefined;
let run: Captured | undefined;
afterEach(async () => {
  await terminate(server?.process.child);
  await terminate(run?.child);
  server = undefined;
  run = undefined;
});

async function verifyLimit(url: string): Promise<GateState> {
  const response = await fetch(`${url}/limits`);
  return ((await response.json()) as { verify: GateState }).verify;
}

const verify = (url: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> =>
  fetch(`${url}/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ answer: 'a', expected: 'a', workMs: 1, ...body }),
    signal,
  });

describe('a stalled verify', () => {
  it('holds its slot past the verify timeout, the calls behind it wait, and a client that leaves gives it back', async () => {
    server = await startServer(
      ['--name', 'stalled', '--verify-limit', '1', '--verify-timeout-ms', '100', '--verify-queue-timeout-ms', '60000'],
      prometheusEnv(0),
    );
    const { url } = server;
    const started = performance.now();
    const stalled = verify(url, { stallMs: 2_000 });
    await waitFor(
      'the stalled call to hold the slot',
      async () => ((await verifyLimit(url)).active === 1 ? true : undefined),
      15_000,
    );
    const behind = verify(url, {});
    await waitFor(
      'a call to wait behind it',
      async () => ((await verifyLimit(url)).queued === 1 ? true : undefined),
      15_000,
    );
    const first = await stalled;
    // Longer than the 100 ms verify timeout: the stall is not the verifier's.
    expect(first.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(2_000);
    await first.arrayBuffer();
    expect((await behind).status).toBe(200);

    const leaving = new AbortController();
    const gone = verify(url, { stallMs: 600_000 }, leaving.signal).catch(() => undefined);
    await waitFor(
      'the long stall to hold the slot',
      async () => ((await verifyLimit(url)).active === 1 ? true : undefined),
      15_000,
    );
    leaving.abort();
    await gone;
    const state = await waitFor(
      'the slot to be given back',
      async () => {
        const now = await verifyLimit(url);
        return now.active === 0 ? now : undefined;
      },
      15_000,
    );
    expect(state.admitted).toBe(3);
  }, 60_000);

  it('--stall-verifies-ms holds every verify slot for its window, then verifies recover', async () => {
    run = spawnNode(
      distFile('orchestrator.js'),
      [
        '--servers',
        '1',
        '--limit',
        '1',
        '--queue-timeout-ms',
        '60000',
        '--stall-verifies-ms',
        '4000',
        '--duration',
        '8',
      ],
      prometheusEnv(0),
    );
    const current = run;
    const url = await waitFor(
      'the server',
      () => /server-1\s+pid \d+\s+(http:\/\/\S+)/.exec(current.stdout)?.[1],
      60_000,
    );
    await waitFor('the load', () => (current.stdout.includes('Load:') ? true : undefined), 60_000);
    // Within the window: the slot is held, calls wait, and nothing new is admitted.
    const held = await waitFor(
      'the verify limit to be held with calls waiting',
      async () => {
        const state = await verifyLimit(url);
        return state.active === 1 && state.queued > 0 ? state : undefined;
      },
      30_000,
    );
    await sleep(1_000);
    const later = await verifyLimit(url);
    expect(later.active).toBe(1);
    expect(later.admitted).toBe(held.admitted);
    // After it: verifies run again and the run ends as usual.
    const { code } = await exited(current.child);
    expect(code).toBe(0);
    const verifyLine = /^verify\s+subprocess\s.*\sok (\d+)/m.exec(current.stdout);
    expect(Number(verifyLine?.[1])).toBeGreaterThan(1);
  }, 120_000);
});
