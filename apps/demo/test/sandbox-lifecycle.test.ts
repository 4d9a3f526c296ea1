// The sandbox lifecycle a real server process (dist/server.js) records with telemetry on: an
// exec runs inside the sandbox process and is timed into gym.sandbox.exec_duration_ms, an
// upload is timed into gym.sandbox.transfer_duration_ms, and the
// fake provider's busy first attempt (one create in --sandbox-create-fail-every, the first among
// them) is retried and counted in gym.sandbox.create_retry_total; the caller sees one create.
// And the rollouts the load generator drives against it: a tool call then a verify, each ended
// episode reported once, an episode begun before the time was up driven to its end.

import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runLoad } from '../src/load-generator.js';
import { type PromSample, parsePrometheusText } from '../src/prometheus-text.js';
import { SandboxPool } from '../src/sandbox-pool.js';
import { startServer, type TestServer, terminate } from './support/processes.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer(['--name', 'lifecycle', '--max-sandboxes', '2', '--sandbox-create-fail-every', '3'], {
    ...process.env,
    NEMO_GYM_OTEL_ENABLED: '1',
    NEMO_GYM_OTEL_EXPORTER: 'prometheus',
    // The sandbox group gates the lifecycle metrics.
    NEMO_GYM_OTEL_SPAN_GROUPS: 'default,sandbox',
    OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
    // Port 0: the server binds a free port itself and reports it (no race for the port).
    OTEL_EXPORTER_PROMETHEUS_PORT: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: '',
  });
}, 60_000);

afterAll(async () => {
  await terminate(server?.process.child);
});

interface Answer {
  status: number;
  body: { id?: string; digest?: string; bytes?: number; error?: string };
}

async function send(method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

async function scrape(): Promise<PromSample[]> {
  if (server.metrics === null) throw new Error('the server reported no Prometheus endpoint');
  return parsePrometheusText(await (await fetch(server.metrics)).text());
}

function value(samples: readonly PromSample[], name: string): number {
  return samples
    .filter((sample) => sample.name === name && sample.labels.nemo_gym_sandbox_provider === 'local-process')
    .reduce((sum, sample) => sum + sample.value, 0);
}

function sha256Rounds(input: string, rounds: number): string {
  let digest = input;
  for (let i = 0; i < rounds; i++) digest = createHash('sha256').update(digest).digest('hex');
  return digest;
}

describe('a sandbox exec', () => {
  it('runs inside the sandbox process, answers its digest, and is timed per provider', async () => {
    const created = await send('POST', '/sandboxes', { cpu: 0, memoryMib: 0, lifetimeMs: 20_000 });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    try {
      for (const [input, rounds] of [
        ['a', 1],
        ['b', 500],
      ] as const) {
        const answer = await send('POST', `/sandboxes/${id}/exec`, { input, rounds });
        expect(answer).toEqual({ status: 200, body: { id, digest: sha256Rounds(input, rounds) } });
      }
      expect(value(await scrape(), 'gym_sandbox_exec_duration_ms_count')).toBe(2);
    } finally {
      expect((await send('DELETE', `/sandboxes/${id}`)).status).toBe(200);
    }
  });

  it('an upload hands a file to the sandbox process and is timed into the transfer histogram', async () => {
    const created = await send('POST', '/sandboxes', { cpu: 0, memoryMib: 0, lifetimeMs: 20_000 });
    const id = created.body.id as string;
    try {
      const before = value(await scrape(), 'gym_sandbox_transfer_duration_ms_count');
      const answer = await send('POST', `/sandboxes/${id}/file`, { name: 'task.txt', content: 'héllo' });
      expect(answer).toEqual({ status: 200, body: { id, bytes: 6 } });
      expect((await send('POST', `/sandboxes/${id}/file`, { name: 'x', content: 1 })).status).toBe(400);
      expect(value(await scrape(), 'gym_sandbox_transfer_duration_ms_count')).toBe(before + 1);
    } finally {
      await send('DELETE', `/sandboxes/${id}`);
    }
  });

  it('answers 404 for an unknown sandbox and 400 for a bad body, and times nothing', async () => {
    expect((await send('POST', '/sandboxes/nope/exec', { input: 'x' })).status).toBe(404);
    const created = await send('POST', '/sandboxes', { cpu: 0, memoryMib: 0, lifetimeMs: 20_000 });
    const id = created.body.id as string;
    try {
      const bad = await send('POST', `/sandboxes/${id}/exec`, { input: 'x', rounds: 0 });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/rounds/);
      expect((await send('POST', `/sandboxes/${id}/exec`, { input: 'x', extra: 1 })).status).toBe(400);
      expect(value(await scrape(), 'gym_sandbox_exec_duration_ms_count')).toBe(2);
    } finally {
      await send('DELETE', `/sandboxes/${id}`);
    }
  });
});

describe('sandbox creates against a provider that is busy now and then', () => {
  it('retries the first create, then one in --sandbox-create-fail-every, and counts each retry once', async () => {
    // Three creates so far; with every 3, creates 1, 4, 7 … meet the busy provider once.
    const before = await scrape();
    const startups = value(before, 'gym_sandbox_startup_duration_ms_count');
    expect(startups).toBe(3);
    // The first create met the busy provider once.
    expect(value(before, 'gym_sandbox_create_retry_total')).toBe(1);
    for (let n = 4; n <= 7; n++) {
      const created = await send('POST', '/sandboxes', { cpu: 0, memoryMib: 0, lifetimeMs: 20_000 });
      expect(created.status).toBe(201);
      expect((await send('DELETE', `/sandboxes/${created.body.id}`)).status).toBe(200);
    }
    const after = await scrape();
    expect(value(after, 'gym_sandbox_startup_duration_ms_count')).toBe(7);
    expect(value(after, 'gym_sandbox_create_retry_total')).toBe(3);
    expect(value(after, 'gym_sandbox_active')).toBe(0);
  });
});

describe('SandboxPool.exec', () => {
  it('answers 409 when the sandbox process ends during the exec', async () => {
    const pool = new SandboxPool({ capacity: 1, createFailEvery: 0 });
    const handle = pool.create({ cpu: 0, memoryMib: 0, lifetimeMs: 20_000 });
    try {
      // Stopped, it cannot answer; killed, it ends while the exec waits for it.
      process.kill(handle.pid, 'SIGSTOP');
      const exec = pool.exec(handle.id, { input: 'x', rounds: 1 });
      process.kill(handle.pid, 'SIGKILL');
      await expect(exec).rejects.toMatchObject({ status: 409, message: 'the sandbox ended during the exec' });
    } finally {
      await pool.closeAll();
    }
  });
});

describe('rollouts driven by the load generator', () => {
  it('reports each ended episode once (a tool call, then a verify), and abandons none on a healthy server', async () => {
    const durations: number[] = [];
    const load = await runLoad({
      targets: [{ name: 'lifecycle', url: () => server.url }],
      durationMs: 500,
      maxRequests: undefined,
      workers: { verify: 0, tool: 0, judge: 0, sandbox: 0, rollout: 2 },
      signal: new AbortController().signal,
      onRollout: (ms) => durations.push(ms),
    });
    expect(load.rollouts.ended).toBeGreaterThan(0);
    // The episode under way when the time ran out was finished, not dropped.
    expect(load.rollouts.abandoned).toBe(0);
    expect(durations).toHaveLength(load.rollouts.ended);
    expect(Math.max(...durations)).toBe(load.rollouts.longestMs);
    expect(load.rollouts.totalMs).toBeCloseTo(
      durations.reduce((sum, ms) => sum + ms, 0),
      6,
    );
    // One tool call and one verify per episode (two verify slots, two workers: no refusal to retry).
    expect(load.routes.tool.requests).toBe(load.rollouts.ended);
    expect(load.routes.verify.requests).toBe(load.rollouts.ended);
    expect(load.noAnswer).toBe(0);
  }, 30_000);
});
