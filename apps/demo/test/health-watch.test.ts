// The health watch against real servers in other processes: one that answers every check late
// (after twice the deadline, well within the hung delay) is slow, not hung; one that accepts
// and never answers is hung; and a watcher whose own event loop stood still for longer than
// the hung delay does not take its own pause for the servers' silence. Every delay is far from
// the bounds it tests (a late answer at 2× the deadline and ½ the hung delay), so a slow machine
// moves no verdict.

import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { FleetMember } from '../src/fleet.js';
import { HealthWatch, type HungServer } from '../src/health-watch.js';
import { terminate, waitFor } from './support/processes.js';

const DEADLINE_MS = 1_000;
const HUNG_AFTER_MS = 4_000;

/**
 * A server in its own process whose `/healthz` answers after `delayMs`, or never (`null`); it
 * prints `check` for each. A line `once <ms>` on its stdin delays the next answer by that much.
 */
const SERVER = `
let delay = JSON.parse(process.argv[1]);
let once;
process.stdin.setEncoding('utf8').on('data', (line) => { once = Number(line.split(' ')[1]); process.stdout.write('armed\\n'); });
require('node:http').createServer((req, res) => {
  process.stdout.write('check\\n');
  const wait = once ?? delay;
  once = undefined;
  if (wait !== null) setTimeout(() => res.end('ok'), wait);
}).listen(0, '127.0.0.1', function () { process.stdout.write(this.address().port + '\\n'); });
`;

const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => terminate(child)));
});

async function server(
  name: string,
  delayMs: number | null,
): Promise<FleetMember & { checks: () => number; armed: () => boolean; slowOnce: (ms: number) => void }> {
  const child = spawn(process.execPath, ['-e', SERVER, JSON.stringify(delayMs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const port = await waitFor('the server to listen', () => /^(\d+)\n/m.exec(out)?.[1], 15_000);
  return {
    checks: () => out.split('check').length - 1,
    armed: () => out.includes('armed'),
    slowOnce: (ms) => child.stdin?.write(`once ${ms}\n`),
    name,
    pid: child.pid as number,
    url: `http://127.0.0.1:${port}`,
    metrics: null,
    child,
    index: 0,
    restart: 0,
    type: 'ready',
  };
}

function watch(members: readonly FleetMember[], hung: HungServer[]): HealthWatch {
  return new HealthWatch({
    members: () => members,
    onHung: (found) => hung.push(found),
    everyMs: 250,
    deadlineMs: DEADLINE_MS,
    hungAfterMs: HUNG_AFTER_MS,
  });
}

describe('the health watch', () => {
  it('calls a server that answers every check late slow, not hung; one that never answers is hung', async () => {
    const slow = await server('slow', 2 * DEADLINE_MS);
    const silent = await server('silent', null);
    const hung: HungServer[] = [];
    const health = watch([slow, silent], hung);
    health.start();
    try {
      const found = await waitFor('the silent server to be reported', () => hung[0], 30_000);
      expect(found.member.name).toBe('silent');
      expect(found.silentMs).toBeGreaterThanOrEqual(HUNG_AFTER_MS);
      // Its process was not stopped: on Linux its CPU time is read, and it is a number.
      if (process.platform === 'linux') expect(typeof found.cpuMs).toBe('number');
      // Twice the hung delay with every answer late: still not hung.
      await new Promise((resolve) => setTimeout(resolve, 2 * HUNG_AFTER_MS));
      expect(hung.map((entry) => entry.member.name)).toEqual(['silent']);
    } finally {
      await health.stop();
    }
  }, 60_000);

  it("does not take its own pause for the servers' silence", async () => {
    const prompt = await server('prompt', 0);
    const hung: HungServer[] = [];
    const health = watch([prompt], hung);
    health.start();
    try {
      await waitFor('a few answered checks', () => (prompt.checks() >= 3 ? true : undefined), 30_000);
      // The next check is answered 1.5 s after the pause below ends: it is in flight across the
      // pause and past its deadline on the wall clock, not on the watcher's running clock.
      const pauseMs = HUNG_AFTER_MS + 2_000;
      prompt.slowOnce(pauseMs + 1_500);
      await waitFor('the server to take it', () => (prompt.armed() ? true : undefined), 30_000, 1);
      const seen = prompt.checks();
      await waitFor('a check in flight', () => (prompt.checks() > seen ? true : undefined), 30_000, 1);
      // The watcher's event loop stands still for longer than the hung delay (as under SIGSTOP,
      // a long GC pause or a VM that was not scheduled); the server runs on in its own process.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pauseMs);
      // Long enough after the pause for two full deadlines and the hung delay's worth of rounds.
      await new Promise((resolve) => setTimeout(resolve, HUNG_AFTER_MS + 2 * DEADLINE_MS));
      expect(hung.map((found) => `${found.member.name} silent ${Math.round(found.silentMs)} ms`)).toEqual([]);
      expect(health.answering).toBe(1);
    } finally {
      await health.stop();
    }
  }, 60_000);
});
