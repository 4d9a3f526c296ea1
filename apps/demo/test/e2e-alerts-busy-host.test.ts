// Slow is not down, live: a healthy one-server fleet (the same options and load as the healthy
// fleet of e2e-alerts.test.ts) under a real Prometheus evaluating the generated rules (scaled in
// time by 1/5, evaluations every second), scraped as the demo's `--prometheus` scrapes
// (`SCRAPE_SECONDS`: the rules' windows are scaled, a server's latency is not), while CPU hogs
// started beside it keep the host busy: four per CPU, each bounded (it ends by itself after the
// load, and is killed at the end of the test). The fleet's supervisor keeps its default hung delay
// (6 s): a server that answers late must not be killed as hung. No alert of the fleet may reach
// firing during its load, with the one exception e2e-alerts also makes and measures: a server
// whose event-loop thread the host starves of CPU (waiting for a core 10% of the run or more, from
// /proc/<pid>/schedstat) really lags, and GymEventLoopLagHigh then says so. The figures printed
// say how starved the server was and what its scrapes looked like.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { rulesYaml } from '@gym/dashboards/internal';
import { requireTools } from '@gym/test-kit';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { findPrometheus, freePort, SCRAPE_SECONDS } from '../src/local-prometheus.js';
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
const JOB = 'gym-busy-host';
/** Every window, memory and `for:` of the rules times this. */
const TIME_SCALE = 1 / 5;
/** A failure guard for each state awaited, not a pause. */
const STATE_DEADLINE_MS = 180_000;
/** The load: long enough for every alert's scaled window and `for:` to pass several times. */
const LOAD_S = 75;
/** CPU hogs per CPU. */
const HOGS_PER_CPU = 4;
/** At or above this share of the run spent waiting for a CPU, the host starves the server's loop (as in e2e-alerts). */
const STARVED_WAIT_SHARE = 0.1;

let dir = '';
let prometheus: ChildProcess | undefined;
let url = '';
let fleet: ChildProcess | undefined;
const out = { stdout: '', stderr: '' };
const hogs: ChildProcess[] = [];

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = performance.now() + STATE_DEADLINE_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}\n${out.stderr.slice(-1500)}`);
    await sleep(250);
  }
}

async function query(expr: string): Promise<number | undefined> {
  const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await response.json()) as { data: { result: { value: [number, string] }[] } };
  const sample = body.data.result[0];
  return sample === undefined ? undefined : Number(sample.value[1]);
}

/** Nanoseconds a process's main thread ran on a CPU and waited for one; undefined off Linux. */
async function schedstat(pid: number): Promise<{ ran: number; waited: number } | undefined> {
  try {
    const [ran, waited] = (await readFile(`/proc/${pid}/schedstat`, 'utf8')).split(' ').map(Number);
    return ran === undefined || waited === undefined ? undefined : { ran, waited };
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  const binary = await findPrometheus();
  if (binary === undefined) throw new Error('a Prometheus on PATH is required');
  dir = await mkdtemp(join(tmpdir(), 'gym-e2e-busy-'));
  // 1/5, not e2e-alerts' 1/15: a windowed series counts only while its own series had a sample
  // within the freshness window (50 s, scaled 10 s), which must hold two 5 s scrapes.
  const files = rulesYaml({ timeScale: TIME_SCALE });
  const targets = join(dir, 'targets.json');
  await writeFile(targets, '[]\n');
  await writeFile(join(dir, 'recording.yml'), files['prometheus/gym-recording.rules.yml']);
  await writeFile(join(dir, 'alerts.yml'), files['prometheus/gym-alerts.rules.yml']);
  await writeFile(
    join(dir, 'prometheus.yml'),
    [
      `global: { scrape_interval: ${SCRAPE_SECONDS}s, scrape_timeout: ${SCRAPE_SECONDS}s, evaluation_interval: 1s }`,
      `rule_files: [${JSON.stringify(join(dir, 'recording.yml'))}, ${JSON.stringify(join(dir, 'alerts.yml'))}]`,
      'scrape_configs:',
      `  - job_name: ${JOB}`,
      `    file_sd_configs: [{ files: [${JSON.stringify(targets)}], refresh_interval: 1s }]`,
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
}, STATE_DEADLINE_MS + 30_000);

afterAll(async () => {
  for (const hog of hogs) if (hog.exitCode === null && hog.signalCode === null) hog.kill('SIGKILL');
  for (const child of [fleet, prometheus]) {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) continue;
    const done = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await done;
    clearTimeout(force);
  }
  if (dir !== '') await rm(dir, { recursive: true, force: true });
}, 60_000);

tools.describe('a healthy fleet on a host kept busy by CPU hogs', () => {
  it(
    'fires no alert (a starved loop may say it lags), and its supervisor kills nothing as hung',
    async () => {
      const args = ['--servers', '1', '--limit', '16', '--judge-limit', '8', '--verify-timeout-ms', '5000'];
      args.push('--duration', String(LOAD_S), '--restarts', '0', '--linger', '600');
      args.push('--targets-file', join(dir, 'targets.json'));
      fleet = spawn(process.execPath, [ORCHESTRATOR, ...args], { env: ENV, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
      fleet.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        out.stdout += chunk;
      });
      fleet.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        out.stderr += chunk;
      });
      await until('the load', () => (out.stdout.includes('Load:') ? true : undefined));
      const start = performance.now();
      const since = (): number => Math.round((performance.now() - start) / 100) / 10;
      // Bounded: each hog ends by itself when the load is over, and is killed at the end anyway.
      const count = HOGS_PER_CPU * availableParallelism();
      const hogScript = `const end = Date.now() + ${LOAD_S * 1000}; while (Date.now() < end) {}`;
      for (let i = 0; i < count; i++) hogs.push(spawn(process.execPath, ['-e', hogScript], { stdio: 'ignore' }));
      const pid = Number(/server-1\s+pid (\d+)/.exec(out.stdout)?.[1]);
      const before = await schedstat(pid);
      const fired: string[] = [];
      const pending = new Set<string>();
      let polls = 0;
      await until('the end of the load', async () => {
        polls++;
        const response = await fetch(`${url}/api/v1/alerts`);
        const alerts = (
          (await response.json()) as { data: { alerts: { labels: Record<string, string>; state: string }[] } }
        ).data.alerts;
        for (const alert of alerts) {
          if (alert.labels.job !== JOB) continue;
          const name = alert.labels.alertname ?? '';
          if (alert.state === 'firing') fired.push(`${name} at ${since()} s`);
          else pending.add(name);
        }
        return out.stdout.includes('The fleet stays up') ? true : undefined;
      });
      const after = await schedstat(pid);
      const waitShare =
        before !== undefined && after !== undefined
          ? (after.waited - before.waited) / 1e6 / (performance.now() - start)
          : undefined;
      for (const hog of hogs) hog.kill('SIGKILL');
      const over = `${Math.ceil(since())}s`;
      const scrapes = await query(`sum(count_over_time(up{job="${JOB}"}[${over}]))`);
      const answered = await query(`sum(sum_over_time(up{job="${JOB}"}[${over}]))`);
      const slowest = await query(`max(max_over_time(scrape_duration_seconds{job="${JOB}"}[${over}]))`);
      const lag = await query(`max(max_over_time(instance:gym_event_loop_lag_ms:p99_rate5m{job="${JOB}"}[${over}]))`);
      const starved = waitShare !== undefined && waitShare >= STARVED_WAIT_SHARE;
      const firedNames = [...new Set(fired.map((entry) => entry.split(' at ')[0]))];
      process.stdout.write(
        `busy host: ${count} hogs over ${since()} s and ${polls} polls; the server waited for a CPU ${waitShare === undefined ? '(unknown)' : `${Math.round(waitShare * 100)}%`} of the run; ` +
          `scrapes answered ${answered} of ${scrapes} (slowest ${slowest} s); highest lag p99 ${lag} ms; ` +
          `fired: ${firedNames.join(', ') || 'none'}; pending at some point: ${[...pending].join(', ') || 'none'}\n`,
      );
      expect(out.stderr).not.toMatch(/is hung/);
      expect(out.stdout).not.toMatch(/died/);
      const excused = (entry: string): boolean => starved && entry.startsWith('GymEventLoopLagHigh ');
      expect(fired.filter((entry) => !excused(entry))).toEqual([]);
      expect(polls).toBeGreaterThan(10);
    },
    STATE_DEADLINE_MS * 2,
  );
});
