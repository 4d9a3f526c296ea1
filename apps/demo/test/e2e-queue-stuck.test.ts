// A stuck limit, live: two one-server fleets side by side under a real Prometheus evaluating the
// generated rules (scaled in time by 1/15; the stuck threshold, an age, is not scaled; scrapes
// every second, well inside the scaled 3.3 s freshness window), each scraped as its own job. The busy fleet's verify limit is full and moving (one slot, a queue of
// two, eight workers: calls wait, run, are refused); the stuck fleet's verify holders hang
// (`--stall-verifies-ms`: every verify sent in the window holds its slot until the window ends,
// and the waiting calls stay queued: a queue deadline longer than the window). Both fire
// GymConcurrencyLimitSaturated; only the stuck one fires GymQueueStuck, which resolves once the
// stall ends. The figures printed show both, so that the saturation alert alone plainly cannot
// tell stuck from busy. Nothing waits a fixed time: Prometheus is polled until the state the test
// needs is there, under deadlines that only guard against a hang.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { rulesYaml } from '@gym/dashboards/internal';
import { requireTools } from '@gym/test-kit';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { findPrometheus, freePort } from '../src/local-prometheus.js';
import { spawnGuarded } from '../src/prometheus-guardian.js';

const tools = requireTools('prometheus');

const ORCHESTRATOR = fileURLToPath(new URL('../dist/orchestrator.js', import.meta.url));
const ENV = {
  ...process.env,
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  NEMO_GYM_OTEL_ENABLED: '',
  NEMO_GYM_OTEL_EXPORTER: '',
  NEMO_GYM_OTEL_RUN_ID: '',
};
const JOBS = ['gym-stuck', 'gym-busy'] as const;
/** A failure guard for each state awaited, not a pause. */
const STATE_DEADLINE_MS = 240_000;
/**
 * The stall: GymQueueStuck needs the oldest wait above 60 s (not scaled: an age) over its whole
 * window (20 s scaled) and then its `for:` (20 s scaled) without the queue moving.
 */
const STALL_MS = 150_000;
const LOAD_S = 200;

let dir = '';
let prometheus: ChildProcess | undefined;
let url = '';
const fleets: ChildProcess[] = [];
const outputs: Record<string, { stdout: string; stderr: string }> = {};
let start = 0;
const since = (): number => Math.round((performance.now() - start) / 100) / 10;

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = performance.now() + STATE_DEADLINE_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}\n${Object.values(outputs)
          .map((o) => o.stderr.slice(-800))
          .join('\n')}`,
      );
    await sleep(250);
  }
}

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

async function alerts(): Promise<Alert[]> {
  const response = await fetch(`${url}/api/v1/alerts`);
  return ((await response.json()) as { data: { alerts: Alert[] } }).data.alerts;
}

const matches = (alert: Alert, name: string, job: string): boolean =>
  alert.labels.alertname === name &&
  alert.labels.job === job &&
  alert.labels.nemo_gym_concurrency_limit_name === 'verify_slots';

async function query(expr: string): Promise<number | undefined> {
  const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await response.json()) as { data: { result: { value: [number, string] }[] } };
  const sample = body.data.result[0];
  return sample === undefined ? undefined : Number(sample.value[1]);
}

beforeAll(async () => {
  const binary = await findPrometheus();
  if (binary === undefined) throw new Error('a Prometheus on PATH is required');
  dir = await mkdtemp(join(tmpdir(), 'gym-e2e-stuck-'));
  const files = rulesYaml({ timeScale: 1 / 15 });
  await writeFile(join(dir, 'recording.yml'), files['prometheus/gym-recording.rules.yml']);
  await writeFile(join(dir, 'alerts.yml'), files['prometheus/gym-alerts.rules.yml']);
  for (const job of JOBS) await writeFile(join(dir, `${job}.json`), '[]\n');
  await writeFile(
    join(dir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
      `rule_files: [${JSON.stringify(join(dir, 'recording.yml'))}, ${JSON.stringify(join(dir, 'alerts.yml'))}]`,
      'scrape_configs:',
      ...JOBS.flatMap((job) => [
        `  - job_name: ${job}`,
        `    file_sd_configs: [{ files: [${JSON.stringify(join(dir, `${job}.json`))}], refresh_interval: 1s }]`,
      ]),
      '',
    ].join('\n'),
  );
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  prometheus = spawnGuarded(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    dir,
  );
  await until('Prometheus to be ready', async () => {
    try {
      return (await fetch(`${url}/-/ready`)).ok ? true : undefined;
    } catch {
      return undefined;
    }
  });
  const common = ['--servers', '1', '--limit', '1', '--duration', String(LOAD_S), '--restarts', '0', '--linger', '600'];
  const extra: Record<(typeof JOBS)[number], string[]> = {
    'gym-stuck': [
      '--max-queued',
      '16',
      '--queue-timeout-ms',
      String(2 * STALL_MS),
      '--stall-verifies-ms',
      String(STALL_MS),
    ],
    'gym-busy': ['--max-queued', '2'],
  };
  for (const job of JOBS) {
    const child = spawn(
      process.execPath,
      [ORCHESTRATOR, ...common, ...extra[job], '--targets-file', join(dir, `${job}.json`)],
      { env: ENV, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
    );
    const out = { stdout: '', stderr: '' };
    outputs[job] = out;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out.stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      out.stderr += chunk;
    });
    fleets.push(child);
  }
  await until('the load of both fleets', () =>
    JOBS.every((job) => outputs[job]?.stdout.includes('Load:')) ? true : undefined,
  );
  start = performance.now();
}, STATE_DEADLINE_MS + 30_000);

afterAll(async () => {
  for (const child of [...fleets, prometheus]) {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) continue;
    const done = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await done;
    clearTimeout(force);
  }
  if (dir !== '') await rm(dir, { recursive: true, force: true });
}, 60_000);

tools.describe('a stuck limit beside a busy one', () => {
  it(
    'both fire GymConcurrencyLimitSaturated; only the stuck one fires GymQueueStuck, which resolves once its holders return',
    async () => {
      const figures: string[] = [];
      const seen: Record<string, number | undefined> = {};
      const busyStuck: string[] = [];
      // Polls until the stuck fleet's GymQueueStuck fired and both saturation alerts did.
      await until('GymQueueStuck on the stuck limit and GymConcurrencyLimitSaturated on both', async () => {
        const now = await alerts();
        for (const job of JOBS)
          for (const name of ['GymConcurrencyLimitSaturated', 'GymQueueStuck'])
            if (seen[`${job} ${name}`] === undefined && now.some((a) => a.state === 'firing' && matches(a, name, job)))
              seen[`${job} ${name}`] = since();
        if (now.some((a) => a.state === 'firing' && matches(a, 'GymQueueStuck', 'gym-busy')))
          busyStuck.push(`${since()} s`);
        return seen['gym-stuck GymQueueStuck'] !== undefined &&
          seen['gym-stuck GymConcurrencyLimitSaturated'] !== undefined &&
          seen['gym-busy GymConcurrencyLimitSaturated'] !== undefined
          ? true
          : undefined;
      });
      const oldest = async (job: string) =>
        query(`max(gym_concurrency_oldest_wait_ms{job="${job}",nemo_gym_concurrency_limit_name="verify_slots"})`);
      figures.push(
        `GymConcurrencyLimitSaturated fired: stuck limit ${seen['gym-stuck GymConcurrencyLimitSaturated']} s, busy limit ${seen['gym-busy GymConcurrencyLimitSaturated']} s — the same alert for both`,
        `GymQueueStuck fired: stuck limit ${seen['gym-stuck GymQueueStuck']} s (stall of ${STALL_MS / 1000} s from the start of the load; oldest wait now ${await oldest('gym-stuck')} ms), busy limit never (oldest wait now ${await oldest('gym-busy')} ms)`,
      );
      // The stall ends: its holders return, the queue moves, the alert resolves.
      await until('GymQueueStuck to resolve on the stuck limit', async () => {
        const now = await alerts();
        if (now.some((a) => a.state === 'firing' && matches(a, 'GymQueueStuck', 'gym-busy')))
          busyStuck.push(`${since()} s`);
        return now.some((a) => matches(a, 'GymQueueStuck', 'gym-stuck')) ? undefined : true;
      });
      figures.push(
        `GymQueueStuck resolved on the stuck limit ${since()} s (the stall ended ${STALL_MS / 1000} s into the load)`,
      );
      process.stdout.write(`stuck and busy limits (s since their load started):\n${figures.join('\n')}\n`);
      expect(since()).toBeGreaterThan(STALL_MS / 1000 - 5);
      expect(busyStuck).toEqual([]);
    },
    STATE_DEADLINE_MS * 3,
  );
});
