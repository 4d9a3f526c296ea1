// End to end: the demo fleet, scraped by a real Prometheus started the way the demo's
// `--prometheus` starts it (loopback, temporary storage, 1 s scrapes and rule evaluations, the
// rules of this package loaded, the fleet found through its file_sd file). Every expression of
// the rules and of the dashboard is evaluated over Prometheus' HTTP API, as Grafana would,
// and every panel whose series the demo exposes must return data.
//
// The demo is run from its build (apps/demo/dist). GYM_E2E_ORCHESTRATOR may point at another
// build of the orchestrator (e.g. to check these queries against an older demo).

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generate, prometheusNames, SERIES, type SeriesId } from '@gym/dashboards';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { type LocalPrometheus, startLocalPrometheus } from '../../../apps/demo/src/local-prometheus.js';
import { panelQueries, readDashboard } from './support/dashboard-queries.js';

const ORCHESTRATOR =
  process.env.GYM_E2E_ORCHESTRATOR ??
  fileURLToPath(new URL('../../../apps/demo/dist/orchestrator.js', import.meta.url));
const SERVERS = 2;

/**
 * Every panel, with the series it reads and whether the demo must produce them (`produces`).
 * `pending` panels read series the demo does not record (rollouts, sandbox lifecycle) or only
 * once something happened (garbage-collection time, after the first collection): they must
 * evaluate without error, and must return data whenever the demo exposes their series.
 */
const PANELS: Record<string, { series: SeriesId[]; need: 'all' | 'any'; demo: 'produces' | 'pending' }> = {
  'Queue p99 against run p99, by operation': {
    series: ['operationQueueDuration', 'operationDuration'],
    need: 'all',
    demo: 'produces',
  },
  'Queue p50 against run p50, by operation': {
    series: ['operationQueueDuration', 'operationDuration'],
    need: 'all',
    demo: 'produces',
  },
  'Waiting and running now, by operation': {
    series: ['operationQueued', 'operationActive'],
    need: 'all',
    demo: 'produces',
  },
  'Calls per second, by operation': { series: ['operationDuration'], need: 'all', demo: 'produces' },
  'Saturation (slots held / limit), busiest server': {
    series: ['concurrencyActive', 'concurrencyLimit'],
    need: 'all',
    demo: 'produces',
  },
  'Queue depth per limit': { series: ['concurrencyQueueDepth', 'concurrencyAvailable'], need: 'any', demo: 'produces' },
  'Admission refusals per second': {
    series: ['admissionTimeouts', 'admissionCancelled', 'admissionRejected'],
    need: 'any',
    demo: 'produces',
  },
  'Share of calls not ending ok, by operation and outcome': {
    series: ['operationDuration'],
    need: 'all',
    demo: 'produces',
  },
  'Calls per second, by outcome': { series: ['operationDuration'], need: 'all', demo: 'produces' },
  'Verify duration': { series: ['verifyDuration'], need: 'all', demo: 'produces' },
  'Verify success rate, by server': { series: ['verifySuccessRate'], need: 'all', demo: 'produces' },
  'Rollout duration': { series: ['rolloutDuration'], need: 'all', demo: 'pending' },
  'Servers in the fleet': { series: ['serversActive'], need: 'all', demo: 'produces' },
  'Event-loop lag p99, by server': { series: ['eventLoopLag'], need: 'all', demo: 'produces' },
  'CPU, by server and mode': { series: ['processCpuTime'], need: 'all', demo: 'produces' },
  'Memory, by server': { series: ['processMemoryUsage'], need: 'all', demo: 'produces' },
  'Requests in flight, by server': { series: ['requestsInFlight'], need: 'all', demo: 'produces' },
  'Time in garbage collection, by server': { series: ['gcDuration'], need: 'all', demo: 'pending' },
  'Threads and open file descriptors, by server': {
    series: ['processThreadCount', 'processOpenFds'],
    need: 'any',
    demo: 'produces',
  },
  'Sandboxes held, by provider': { series: ['sandboxActive'], need: 'all', demo: 'pending' },
  'Sandbox startup, by provider': { series: ['sandboxStartupDuration'], need: 'all', demo: 'pending' },
  'Sandbox exec, by provider': { series: ['sandboxExecDuration'], need: 'all', demo: 'pending' },
  'Sandbox create retries per second, by provider': {
    series: ['sandboxCreateRetry'],
    need: 'all',
    demo: 'pending',
  },
};

const QUIET_ENV = {
  ...process.env,
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  NEMO_GYM_OTEL_ENABLED: '',
  NEMO_GYM_OTEL_EXPORTER: '',
  NEMO_GYM_OTEL_RUN_ID: '',
};

let prometheus: LocalPrometheus | undefined;
let orchestrator: ChildProcess | undefined;
let stdout = '';
let stderr = '';
let runId = '';

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${prometheus?.url}${path}`);
  const json = (await response.json()) as { status: string; data: T; error?: string };
  if (json.status !== 'success') throw new Error(`${path}: ${json.error}`);
  return json.data;
}

function query(promql: string): Promise<Sample[]> {
  return api<{ result: Sample[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`).then((data) => data.result);
}

/** A dashboard expression as Grafana sends it, with the variables set. */
function withVariables(expr: string, server = '.*', run = runId): string {
  return expr.replaceAll('$job', '.*').replaceAll('$server', server).replaceAll('$run_id', run);
}

async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (${String(last)})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

beforeAll(async () => {
  prometheus = await startLocalPrometheus();
  if (prometheus === undefined) throw new Error('a Prometheus on PATH or at /usr/bin/prometheus is required');
  const env = QUIET_ENV;
  const args = ['--servers', String(SERVERS), '--limit', '1', '--duration', '6', '--linger', '45'];
  // The IPC channel ties the fleet to this test: if jest dies, the orchestrator stops.
  const child = spawn(process.execPath, [ORCHESTRATOR, ...args, '--targets-file', prometheus.targetsFile], {
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  orchestrator = child;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  await waitFor(
    'the orchestrator summary',
    () => {
      if (child.exitCode !== null) throw new Error(`orchestrator exited early: ${stderr.slice(-2000)}`);
      return stdout.includes('The fleet stays up') ? true : undefined;
    },
    40_000,
  );
  runId = /run ([0-9a-zA-Z_-]+)/.exec(stdout)?.[1] ?? '';
  const loadEnded = Date.now() / 1000;
  // Every endpoint scraped after the load, then every rule group evaluated after that scrape.
  const scraped = await waitFor(
    'a scrape of the whole fleet after the load',
    async () => {
      const up = await query(`timestamp(up == 1) > ${loadEnded}`);
      return up.length === SERVERS + 1 ? Math.max(...up.map((sample) => Number(sample.value[1]))) : undefined;
    },
    15_000,
  );
  await waitFor(
    'every rule group evaluated after that scrape',
    async () => {
      const { groups } = await api<{ groups: { lastEvaluation: string }[] }>('/api/v1/rules');
      return groups.length === 2 && groups.every((group) => Date.parse(group.lastEvaluation) / 1000 > scraped + 1)
        ? true
        : undefined;
    },
    15_000,
  );
}, 80_000);

afterAll(async () => {
  if (orchestrator !== undefined) {
    const done = stopped(orchestrator);
    orchestrator.kill('SIGTERM');
    const force = setTimeout(() => orchestrator?.kill('SIGKILL'), 10_000);
    await done;
    clearTimeout(force);
  }
  await prometheus?.stop();
}, 30_000);

describe('the rules in a real Prometheus that scraped the demo', () => {
  it('loads every recording and alerting rule, and each evaluates without error', async () => {
    const { groups } = await api<{
      groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[];
    }>('/api/v1/rules');
    const files = generate();
    const expected = ['prometheus/gym-recording.rules.yml', 'prometheus/gym-alerts.rules.yml'] as const;
    const shipped = expected.flatMap(
      (path) => (parse(files[path]) as { groups: { rules: { record?: string; alert?: string }[] }[] }).groups,
    );
    const names = shipped.flatMap((group) => group.rules.map((rule) => rule.record ?? rule.alert));
    const loaded = groups.flatMap((group) => group.rules);
    // Prometheus orders groups by file name; the order inside a group is the file's.
    expect(loaded.map((rule) => rule.name).sort()).toEqual(names.sort());
    for (const rule of loaded)
      expect({ rule: rule.name, health: rule.health, error: rule.lastError ?? '' }).toEqual({
        rule: rule.name,
        health: 'ok',
        error: '',
      });
  });

  it('returns data from the recorded series of the operations, verify and fleet', async () => {
    for (const recorded of [
      'instance:gym_resources_operation_queue_duration_ms_bucket:rate5m',
      'instance:gym_resources_operation_duration_ms_bucket:rate5m',
      'instance:gym_resources_operation_duration_ms_count:rate5m',
      'job:gym_resources_operation_duration_ms:failure_ratio_rate5m',
      'instance:gym_verify_duration_ms_bucket:rate5m',
    ]) {
      expect({ recorded, series: (await query(recorded)).length > 0 }).toEqual({ recorded, series: true });
    }
  });
});

describe('the dashboard against a real Prometheus that scraped the demo', () => {
  it('lists every panel in the table of what the demo produces', () => {
    const titles = [...new Set(panelQueries().map((query) => query.panel))].sort();
    expect(titles).toEqual(Object.keys(PANELS).sort());
  });

  it('evaluates every panel query and the alert annotation without error', async () => {
    for (const panel of panelQueries()) {
      await expect(query(withVariables(panel.expr))).resolves.toEqual(expect.any(Array));
    }
    const annotations = readDashboard().annotations.list;
    expect(annotations.map((annotation) => annotation.name)).toEqual(['Gym alerts firing']);
    for (const annotation of annotations) {
      await expect(query(withVariables(annotation.expr ?? ''))).resolves.toEqual(expect.any(Array));
    }
  });

  it('returns data for every panel whose series the demo exposes', async () => {
    const checked: string[] = [];
    for (const [title, expectation] of Object.entries(PANELS)) {
      const present = await Promise.all(
        expectation.series.map(async (id) => (await query(`count(${prometheusNames(SERIES[id]).series})`)).length > 0),
      );
      const exposed = expectation.need === 'all' ? present.every(Boolean) : present.some(Boolean);
      if (expectation.demo === 'produces') expect({ title, exposed }).toEqual({ title, exposed: true });
      if (!exposed) continue;
      const results = await Promise.all(
        panelQueries()
          .filter((panel) => panel.panel === title)
          .map(async (panel) => (await query(withVariables(panel.expr))).length),
      );
      const nonEmpty = expectation.need === 'all' ? results.every((n) => n > 0) : results.some((n) => n > 0);
      expect({ title, nonEmpty }).toEqual({ title, nonEmpty: true });
      checked.push(title);
    }
    expect(checked.length).toBeGreaterThanOrEqual(
      Object.values(PANELS).filter((panel) => panel.demo === 'produces').length,
    );
  });

  it('shows queue p99 above run p99 for verify, the demo’s one-slot limit', async () => {
    const [queueQuery, runQuery] = panelQueries().filter(
      (panel) => panel.panel === 'Queue p99 against run p99, by operation',
    );
    const verify = async (expr: string) =>
      Number(
        (await query(withVariables(expr))).find((s) => s.metric.nemo_gym_resources_operation === 'verify')?.value[1],
      );
    const queue = await verify(queueQuery?.expr ?? '');
    const run = await verify(runQuery?.expr ?? '');
    expect(run).toBeGreaterThan(0);
    expect(queue).toBeGreaterThan(run);
  });

  it('narrows to one server and to one run through target_info', async () => {
    const [successRate] = panelQueries().filter((panel) => panel.panel === 'Verify success rate, by server');
    const all = await query(withVariables(successRate?.expr ?? ''));
    expect(all).toHaveLength(SERVERS);
    const one = await query(withVariables(successRate?.expr ?? '', 'server-1'));
    expect(one.map((sample) => sample.metric.nemo_gym_server_name)).toEqual(['server-1']);
    expect(await query(withVariables(successRate?.expr ?? '', '.*', 'no-such-run'))).toEqual([]);
  });

  it('resolves the service, server and run id variables', async () => {
    const variables = readDashboard().templating.list.filter((variable) => variable.type === 'query');
    const values: Record<string, string[]> = {};
    for (const variable of variables) {
      const match = /^label_values\((.+), ([a-z_]+)\)$/.exec(String(variable.query));
      expect(match).not.toBeNull();
      const selector = withVariables(match?.[1] ?? '');
      values[variable.name] = await api<string[]>(
        `/api/v1/label/${match?.[2]}/values?match[]=${encodeURIComponent(selector)}`,
      );
    }
    expect(values.job).toEqual(['gym-demo']);
    expect(values.server).toEqual(expect.arrayContaining(['orchestrator', 'server-1', 'server-2']));
    expect(values.run_id).toEqual([runId]);
  });
});

describe('the shipped dashboard file', () => {
  it('is the one these queries were read from', () => {
    expect(readFileSync(new URL('../generated/grafana/gym-telemetry.json', import.meta.url), 'utf8')).toBe(
      generate()['grafana/gym-telemetry.json'],
    );
  });
});

describe("the demo's --prometheus", () => {
  it('starts Prometheus pointed at the fleet, prints its URL, and stops it with the fleet', async () => {
    const child = spawn(
      process.execPath,
      [ORCHESTRATOR, '--servers', '1', '--duration', '3', '--linger', '30', '--prometheus'],
      { env: QUIET_ENV, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
    );
    let out = '';
    let errors = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      errors += chunk;
    });
    try {
      const url = await waitFor(
        'the Prometheus URL',
        () => {
          if (child.exitCode !== null) throw new Error(`orchestrator exited: ${errors.slice(-2000)}`);
          return /Prometheus {4}(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
        },
        20_000,
      );
      const up = await waitFor(
        'Prometheus to scrape the orchestrator and the server',
        async () => {
          const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent('up == 1')}`);
          const json = (await response.json()) as { data: { result: Sample[] } };
          return json.data.result.length === 2 ? json.data.result : undefined;
        },
        20_000,
      );
      expect(up.map((sample) => sample.metric.job)).toEqual(['gym-demo', 'gym-demo']);
      const rules = (await (await fetch(`${url}/api/v1/rules`)).json()) as { data: { groups: unknown[] } };
      expect(rules.data.groups).toHaveLength(2);
      const done = stopped(child);
      child.kill('SIGTERM');
      await done;
      await expect(fetch(`${url}/-/ready`)).rejects.toThrow();
    } finally {
      // SIGTERM first: the orchestrator stops its Prometheus on the way out; SIGKILL would orphan it.
      if (child.exitCode === null && child.signalCode === null) {
        const done = stopped(child);
        child.kill('SIGTERM');
        const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await done;
        clearTimeout(force);
      }
    }
  }, 45_000);
});
