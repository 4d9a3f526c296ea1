// End to end: the @gym/dashboards rules and dashboard against the demo fleet, scraped by a real
// Prometheus started the way the demo's `--prometheus` starts it (loopback, temporary storage,
// 1 s scrapes and rule evaluations, the generated rules loaded, the fleet found through its
// file_sd file). Every expression of
// the rules and of the dashboard is evaluated over Prometheus' HTTP API, as Grafana would;
// every recording rule and every query of every panel must return data, but for the short list
// of exceptions below (each with the reason the demo cannot fill it).
//
// Nothing here waits a fixed time hoping something happened: process output is awaited as it
// arrives, and Prometheus is polled until what the test needs is there, under deadlines that
// are generous failure guards only (a loaded 2-core machine running the whole suite). The fleet
// lingers until the test stops it, so no deadline races the end of the demo.
//
// The demo is run from its build (apps/demo/dist). GYM_E2E_ORCHESTRATOR may point at another
// build of the orchestrator (e.g. to check these queries against an older demo).

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { generate } from '@gym/dashboards';
import { requireTools } from '@gym/test-kit';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type LocalPrometheus, startLocalPrometheus } from '../src/local-prometheus.js';

const tools = requireTools('prometheus');

const ORCHESTRATOR =
  process.env.GYM_E2E_ORCHESTRATOR ?? fileURLToPath(new URL('../dist/orchestrator.js', import.meta.url));
const SERVERS = 2;
/** The fleet stays up until this test stops it (SIGTERM); this only bounds a run that lost its test. */
const LINGER_S = '600';

/**
 * Panel queries (by panel title and legend) and recorded series the demo cannot fill, with the
 * reason. Everything else must return data. Keep it short: an entry is a series the demo does not
 * produce honestly, never one that is merely slow to appear.
 */
const NOT_PRODUCED: readonly { readonly what: string; readonly why: string }[] = [];

/** How long Prometheus may take to show a series the demo produced (a failure guard, not a pause). */
const DATA_DEADLINE_MS = 90_000;
/** Between two polls of Prometheus. */
const POLL_MS = 250;

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

/** One query of one panel. */
interface PanelQuery {
  readonly panel: string;
  readonly expr: string;
  readonly legend: string;
}

interface JsonPanel {
  title: string;
  targets?: { expr: string; legendFormat?: string }[];
  panels?: JsonPanel[];
}

/** The dashboard the demo's Prometheus serves the rules of, as Grafana reads it. */
function readDashboard(): {
  panels: JsonPanel[];
  templating: { list: { name: string; type: string; query: string | Record<string, unknown> }[] };
  annotations: { list: { name: string; target?: { expr?: string } }[] };
} {
  return JSON.parse(generate()['grafana/gym-telemetry.json']);
}

/** Every query of every panel (also inside rows), in dashboard order. */
function panelQueries(): PanelQuery[] {
  const visit = (panels: readonly JsonPanel[]): PanelQuery[] =>
    panels.flatMap((panel) => [
      ...(panel.targets ?? []).map((target) => ({
        panel: panel.title,
        expr: target.expr,
        legend: target.legendFormat ?? '',
      })),
      ...visit(panel.panels ?? []),
    ]);
  return visit(readDashboard().panels);
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function api<T>(path: string, base = prometheus?.url): Promise<T> {
  const response = await fetch(`${base}${path}`);
  const json = (await response.json()) as { status: string; data: T; error?: string };
  if (json.status !== 'success') throw new Error(`${path}: ${json.error}`);
  return json.data;
}

function query(promql: string, base?: string): Promise<Sample[]> {
  return api<{ result: Sample[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`, base).then(
    (data) => data.result,
  );
}

/** A dashboard expression as Grafana sends it, with the variables set. */
function withVariables(expr: string, server = '.*', run = runId): string {
  return expr.replaceAll('$job', '.*').replaceAll('$server', server).replaceAll('$run_id', run);
}

/** How a panel query is named in the exception list and in failure messages. */
function nameOf(panel: PanelQuery): string {
  return `${panel.panel} · ${panel.legend}`;
}

/**
 * Asks `check` until it returns a value (not undefined), polling every POLL_MS; throws after
 * `ms` with what was awaited and the last error. For state outside this process (Prometheus).
 */
async function poll<T>(what: string, check: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = performance.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (performance.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? ` (${String(last)})` : ''}`);
    await sleep(POLL_MS);
  }
}

/**
 * Resolves with what `found()` returns once it is not undefined, checked each time the child
 * writes; rejects when the child exits first, or after `ms` (a failure guard). `errors` is the
 * child's stderr so far, for the message.
 */
function untilOutput<T>(
  child: ChildProcess,
  what: string,
  found: () => T | undefined,
  errors: () => string,
  ms: number,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (): void => fail(`the orchestrator exited before ${what}`);
    const timer = setTimeout(() => fail(`timed out waiting for ${what}`), ms);
    const off = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      child.off('exit', onExit);
    };
    function fail(message: string): void {
      off();
      reject(new Error(`${message}: ${errors().slice(-2000)}`));
    }
    function check(): void {
      const value = found();
      if (value === undefined) return;
      off();
      resolve(value);
    }
    // Added after the caller's own 'data' listeners, so `found()` already sees the chunk.
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', onExit);
    check();
    if (child.exitCode !== null || child.signalCode !== null) onExit();
  });
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM (the orchestrator stops its fleet and its Prometheus), SIGKILL only if that hangs. */
async function stopOrchestrator(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = stopped(child);
  child.kill('SIGTERM');
  const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await done;
  clearTimeout(force);
}

/** The names of the rules of one generated file (`record:` or `alert:`, one line each, as generated). */
function ruleNames(path: 'prometheus/gym-recording.rules.yml' | 'prometheus/gym-alerts.rules.yml'): string[] {
  return [...generate()[path].matchAll(/^ {6}- (?:record|alert): (\S+)$/gm)].map((match) => match[1] as string);
}

/** Every recording rule the package ships. */
function recordedSeries(): string[] {
  return ruleNames('prometheus/gym-recording.rules.yml');
}

const excepted = new Set(NOT_PRODUCED.map((entry) => entry.what));

/**
 * The empty ones among every recording rule and every panel query not excepted, once none is
 * (or the deadline passed: then the ones still empty). Memoised: asked once, by the first test
 * that needs data.
 */
let emptyOnes: Promise<string[]> | undefined;
function stillEmpty(): Promise<string[]> {
  emptyOnes ??= (async () => {
    const checks = [
      ...recordedSeries().map((record) => ({ what: record, expr: record })),
      ...panelQueries().map((panel) => ({ what: nameOf(panel), expr: withVariables(panel.expr) })),
    ].filter((check) => !excepted.has(check.what));
    let empty = checks.map((check) => check.what);
    try {
      await poll(
        'every recording rule and every panel query to return data',
        async () => {
          const results = await Promise.all(checks.map(async (check) => (await query(check.expr)).length));
          empty = checks.filter((_, i) => results[i] === 0).map((check) => check.what);
          return empty.length === 0 ? true : undefined;
        },
        DATA_DEADLINE_MS,
      );
    } catch {
      // The deadline passed: the test says which stayed empty.
    }
    return empty;
  })();
  return emptyOnes;
}

beforeAll(async () => {
  prometheus = await startLocalPrometheus();
  if (prometheus === undefined) throw new Error('prometheus is not on PATH');
  // 30 s of load: the failure-share and refusal-share rules record only a series with at least
  // 100 calls in its window, and the one-slot verify limit lets the fleet make about 30 verify
  // calls a second on a quiet machine (judge about 20). A 6 s load left them under 100 calls in
  // a loaded CI run; 30 s gives verify about nine times the floor here, judge six. (A request
  // count instead of seconds ends the load early on the fast tool route and starves verify.)
  const args = ['--servers', String(SERVERS), '--limit', '1', '--duration', '30', '--linger', LINGER_S];
  // The IPC channel ties the fleet to this test: if jest dies, the orchestrator stops.
  const child = spawn(process.execPath, [ORCHESTRATOR, ...args, '--targets-file', prometheus.targetsFile], {
    env: QUIET_ENV,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  orchestrator = child;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  await untilOutput(
    child,
    'the summary',
    () => (stdout.includes('The fleet stays up') ? true : undefined),
    () => stderr,
    150_000,
  );
  runId = /run ([0-9a-zA-Z_-]+)/.exec(stdout)?.[1] ?? '';
  const loadEnded = Date.now() / 1000;
  // Every endpoint scraped after the load, then every rule group evaluated after that scrape.
  const scraped = await poll(
    'a scrape of the whole fleet after the load',
    async () => {
      const up = await query(`timestamp(up == 1) > ${loadEnded}`);
      return up.length === SERVERS + 1 ? Math.max(...up.map((sample) => Number(sample.value[1]))) : undefined;
    },
    60_000,
  );
  await poll(
    'every rule group evaluated after that scrape',
    async () => {
      const { groups } = await api<{ groups: { lastEvaluation: string }[] }>('/api/v1/rules');
      return groups.length === 2 && groups.every((group) => Date.parse(group.lastEvaluation) / 1000 > scraped + 1)
        ? true
        : undefined;
    },
    60_000,
  );
}, 300_000);

afterAll(async () => {
  if (orchestrator !== undefined) await stopOrchestrator(orchestrator);
  await prometheus?.stop();
}, 60_000);

tools.describe('the rules in a real Prometheus that scraped the demo', () => {
  it('loads every recording and alerting rule, and each evaluates without error', async () => {
    const { groups } = await api<{
      groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[];
    }>('/api/v1/rules');
    const names = [...recordedSeries(), ...ruleNames('prometheus/gym-alerts.rules.yml')];
    expect(names).toEqual(expect.arrayContaining(['instance:gym_target:up', 'GymOutgoingCallsWaitForConnections']));
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

  it(
    'returns data from every recording rule',
    async () => {
      const recorded = recordedSeries();
      expect(recorded.length).toBeGreaterThanOrEqual(18);
      const empty = await stillEmpty();
      expect(recorded.filter((record) => empty.includes(record))).toEqual([]);
    },
    DATA_DEADLINE_MS + 30_000,
  );
});

tools.describe('the dashboard against a real Prometheus that scraped the demo', () => {
  it('names real panel queries and recorded series in its exceptions, each with a reason', () => {
    const known = new Set([...recordedSeries(), ...panelQueries().map(nameOf)]);
    for (const entry of NOT_PRODUCED) {
      expect({ what: entry.what, known: known.has(entry.what), why: entry.why.length > 20 }).toEqual({
        what: entry.what,
        known: true,
        why: true,
      });
    }
    // Every panel has queries, and no two queries of a panel share a legend (the name above).
    const queries = panelQueries();
    expect(new Set(queries.map((panel) => panel.panel)).size).toBeGreaterThanOrEqual(23);
    expect(new Set(queries.map(nameOf)).size).toBe(queries.length);
  });

  it('evaluates every panel query and the alert annotation without error', async () => {
    for (const panel of panelQueries()) {
      await expect(query(withVariables(panel.expr))).resolves.toEqual(expect.any(Array));
    }
    const annotations = readDashboard().annotations.list;
    expect(annotations.map((annotation) => annotation.name)).toEqual(['Gym alerts firing']);
    for (const annotation of annotations) {
      await expect(query(withVariables(annotation.target?.expr ?? ''))).resolves.toEqual(expect.any(Array));
    }
  });

  it(
    'returns data for every query of every panel',
    async () => {
      const queries = panelQueries().map(nameOf);
      const empty = await stillEmpty();
      expect(queries.filter((name) => empty.includes(name))).toEqual([]);
      // The series behind the panels that were empty before the demo drove rollouts, ran execs in
      // its sandboxes and retried a create: really written by the demo, not by a test fixture.
      for (const series of [
        'gym_rollout_duration_ms_count',
        'gym_sandbox_exec_duration_ms_count',
        'gym_sandbox_create_retry_total',
        'v8js_gc_duration_sum',
        'gym_server_startup_stage_duration_ms_count',
        'gym_http_connection_pool_connect_total',
        'gym_http_connection_pool_queue_duration_ms_count',
      ]) {
        const total = Number((await query(`sum(${series})`))[0]?.value[1] ?? 0);
        expect({ series, positive: total > 0 }).toEqual({ series, positive: true });
      }
    },
    DATA_DEADLINE_MS + 30_000,
  );

  it(
    'shows queue p99 above run p99 for verify, the demo’s one-slot limit',
    async () => {
      await stillEmpty();
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
    },
    DATA_DEADLINE_MS + 30_000,
  );

  it(
    'shows each server’s startup stages, and the calls to its judge that queued for a pooled connection',
    async () => {
      await stillEmpty();
      const panel = (title: string, legend: string): string => {
        const found = panelQueries().find((each) => each.panel === title && each.legend.endsWith(legend));
        if (found === undefined) throw new Error(`no query ${title} · …${legend}`);
        return withVariables(found.expr);
      };
      const values = async (expr: string, ...labels: string[]): Promise<Record<string, number>> =>
        Object.fromEntries(
          (await query(expr)).map((s) => [labels.map((label) => s.metric[label]).join(' '), Number(s.value[1])]),
        );
      // Node's own stages and the demo server's marks, per server; the orchestrator records none.
      const stages = await values(
        panel('Startup stages, by server', '{{nemo_gym_startup_stage}}'),
        'nemo_gym_server_name',
        'nemo_gym_startup_stage',
      );
      for (const server of ['server-1', 'server-2']) {
        for (const stage of ['node_bootstrap', 'parse_config', 'init_telemetry', 'listen']) {
          expect({ server, stage, positive: (stages[`${server} ${stage}`] ?? 0) > 0 }).toEqual({
            server,
            stage,
            positive: true,
          });
        }
      }
      expect(Object.keys(stages).filter((key) => !/^server-\d /.test(key))).toEqual([]);
      const total = await values(panel('Startup stages, by server', 'all stages'), 'nemo_gym_server_name');
      expect(Object.keys(total).sort()).toEqual(['server-1', 'server-2']);
      // The judge pool (half the connections the judge gate admits) makes calls queue under load.
      const share = await values(
        panel(
          'Share of calls that queued for a connection, by server and destination',
          '{{nemo_gym_http_destination_server_name}}',
        ),
        'nemo_gym_server_name',
        'nemo_gym_http_destination_server_name',
      );
      expect(Object.keys(share).sort()).toEqual(['server-1 judge', 'server-2 judge']);
      expect(Object.values(share).every((ratio) => ratio >= 0 && ratio <= 1)).toBe(true);
      expect(Math.max(...Object.values(share))).toBeGreaterThan(0);
      const p50 = await values(
        panel('Connection wait p50 and p99, by destination', 'p50'),
        'nemo_gym_http_destination_server_name',
      );
      const p99 = await values(
        panel('Connection wait p50 and p99, by destination', 'p99'),
        'nemo_gym_http_destination_server_name',
      );
      expect(p50.judge).toBeGreaterThan(0);
      expect(p99.judge).toBeGreaterThanOrEqual(p50.judge ?? Number.NaN);
    },
    DATA_DEADLINE_MS + 30_000,
  );

  it(
    'narrows to one server and to one run through target_info',
    async () => {
      await stillEmpty();
      const [successRate] = panelQueries().filter((panel) => panel.panel === 'Verify success rate, by server');
      const all = await query(withVariables(successRate?.expr ?? ''));
      expect(all).toHaveLength(SERVERS);
      const one = await query(withVariables(successRate?.expr ?? '', 'server-1'));
      expect(one.map((sample) => sample.metric.nemo_gym_server_name)).toEqual(['server-1']);
      expect(await query(withVariables(successRate?.expr ?? '', '.*', 'no-such-run'))).toEqual([]);
    },
    DATA_DEADLINE_MS + 30_000,
  );

  it(
    'resolves the service, server and run id variables',
    async () => {
      await stillEmpty();
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
    },
    DATA_DEADLINE_MS + 30_000,
  );
});

tools.describe('the installed dashboard file', () => {
  it('is the one these queries were read from', () => {
    const installed = createRequire(import.meta.url).resolve('@gym/dashboards/generated/grafana/gym-telemetry.json');
    expect(readFileSync(installed, 'utf8')).toBe(generate()['grafana/gym-telemetry.json']);
  });
});

tools.describe("the demo's --prometheus", () => {
  it('starts Prometheus pointed at the fleet, prints its URL, and stops it with the fleet', async () => {
    const child = spawn(
      process.execPath,
      [ORCHESTRATOR, '--servers', '1', '--duration', '3', '--linger', LINGER_S, '--prometheus'],
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
      const url = await untilOutput(
        child,
        'the Prometheus URL',
        () => /Prometheus {4}(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1],
        () => errors,
        60_000,
      );
      const up = await poll(
        'Prometheus to scrape the orchestrator and the server',
        async () => {
          const result = await query('up == 1', url);
          return result.length === 2 ? result : undefined;
        },
        60_000,
      );
      expect(up.map((sample) => sample.metric.job)).toEqual(['gym-demo', 'gym-demo']);
      const { groups } = await api<{ groups: unknown[] }>('/api/v1/rules', url);
      expect(groups).toHaveLength(2);
      await stopOrchestrator(child);
      await expect(fetch(`${url}/-/ready`)).rejects.toThrow();
    } finally {
      // SIGTERM first: the orchestrator stops its Prometheus on the way out; SIGKILL would orphan it.
      await stopOrchestrator(child);
    }
  }, 180_000);
});
