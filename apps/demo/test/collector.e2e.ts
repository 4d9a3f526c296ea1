// Through a real OpenTelemetry Collector (`npm run e2e:collector`): demo fleets export OTLP to the
// Collector built from tools/otelcol (scripts/otelcol.mjs), and a real Prometheus scrapes the
// Collector's `prometheus` exporter (with `honor_labels: true`, so each server keeps the `job` and
// `instance` the exporter gives it from `service.name` and `service.instance.id`) and evaluates
// the generated rules, scaled in time as in e2e-alerts.test.ts (every window, memory and `for:`
// times 1/15). Per translation strategy:
// - every recording rule and every dashboard query returns data for the servers (the run variable
//   set to the first fleet's run id, read through target_info, as Grafana would);
// - every rule loads and evaluates without error;
// - the saturation, refusal, failing-verify and lost-server alerts fire, and resolve.
//
// A lost server behind a Collector: `up` is the Collector's own, so it says nothing about a server.
// The Collector forgets a server's series `metric_expiration` after its last export (20 s here:
// the exporter's default 5 minutes at the test's scale), Prometheus then marks them stale, and the
// rules see the server's target_info gone: GymTargetsAbsent fires for its job (each demo process
// has its own service name, so its own job), and the orchestrator's GymFleetShrank too.
//
// Every demo process needs `service.instance.id` (here one per fleet, in OTEL_RESOURCE_ATTRIBUTES:
// the per-server service names keep `job`/`instance` unique): the Collector's exporter writes no
// target_info for a resource without it, and the rules would see no server at all.
//
// Skips, naming the reason, when the Collector is not built (or Go is missing) or Prometheus is not
// on PATH; fails instead under GYM_REQUIRE_TOOLS=1 (CI). Nothing waits a fixed time: Prometheus is
// polled until the state awaited is there, under deadlines that only guard against a hang.

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { generate } from '@gym/dashboards';
import { rulesYaml } from '@gym/dashboards/internal';
import { requireTools } from '@gym/test-kit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { findOtelcol } from '../../../scripts/otelcol.mjs';
import { findPrometheus, freePort } from '../src/local-prometheus.js';
import { spawnGuarded } from '../src/prometheus-guardian.js';

const tools = requireTools('prometheus');
const otelcol = findOtelcol();
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Gym's own resources server (tools/gym-oracle: NeMo Gym 0.7.0's example server in a cached Python
 * environment, built by its install.sh), or why it cannot run here.
 */
function gymOracle(): { readonly python: string; readonly server: string } | { readonly reason: string } {
  const server = join(ROOT, 'tools/gym-oracle/oracle_server.py');
  if (!existsSync(server)) return { reason: 'tools/gym-oracle (NeMo Gym 0.7.0, Python) is not in this tree' };
  const run = spawnSync('bash', [join(ROOT, 'tools/gym-oracle/install.sh'), '--print'], { encoding: 'utf8' });
  if (run.status !== 0) return { reason: 'the Gym oracle is not installed (bash tools/gym-oracle/install.sh)' };
  return { python: join(run.stdout.trim(), 'bin/python'), server };
}
const oracle = gymOracle();
/** Gym's server name, and its job behind the Collector (`<service group>/<server name>`). */
const GYM_SERVER = 'example_single_tool_call';
const GYM_JOB = `gym-python/${GYM_SERVER}`;
/** Two Gym servers of one job; nemo-lens makes `service.instance.id` `<run id>-rank<rank>`, so each gets a run id. */
const GYM_RUNS = ['py-a', 'py-b'] as const;
/** A verify request for Gym's example server: a rollout that called its tool (as the parity suite sends). */
const GYM_VERIFY = {
  responses_create_params: { input: "What's the weather in Warsaw?" },
  response: {
    id: 'collector',
    created_at: 0,
    model: 'collector',
    object: 'response',
    output: [
      {
        arguments: '{"city":"Warsaw"}',
        call_id: 'call',
        name: 'get_weather',
        type: 'function_call',
        status: 'completed',
      },
    ],
    parallel_tool_calls: false,
    tool_choice: 'auto',
    tools: [],
  },
};

/** The translation strategies proved here (the Collector's default first). See docs/dashboards.md for the others. */
const STRATEGIES = ['UnderscoreEscapingWithSuffixes'] as const;

const ORCHESTRATOR = fileURLToPath(new URL('../dist/orchestrator.js', import.meta.url));
/** A failure guard for each state awaited (a loaded 2-core machine), not a pause. */
const STATE_DEADLINE_MS = 150_000;
/** As in e2e-alerts.test.ts: a 5-minute window with a 10-minute `for:` becomes 20 s with 40 s. */
const TIME_SCALE = 1 / 15;
/** The Collector forgets a server this long after its last export: its default 5 minutes, scaled. */
const METRIC_EXPIRATION = '20s';
/** The demo's export interval (ms): the scrape interval's 1 s, so a scrape sees every change. */
const EXPORT_INTERVAL_MS = '1000';
/** The saturated fleet's load: long enough for its alerts to wait out their `for:` after the lost server. */
const SATURATED_LOAD_S = 160;
/** The verify-fault fleet's failing window, and its load (well past the window plus the 20 s rule window). */
const FAIL_VERIFIES_MS = 40_000;
const VERIFY_LOAD_S = 90;

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** A demo fleet: its orchestrator and what it printed. */
interface Fleet {
  readonly child: ChildProcess;
  readonly out: { stdout: string; stderr: string };
}

/** The suite for one strategy, or its skip (a failure under GYM_REQUIRE_TOOLS=1) without the Collector. */
function suite(title: string, body: () => void): void {
  if (otelcol.found) tools.describe(title, body);
  else if (process.env.GYM_REQUIRE_TOOLS === '1')
    describe(title, () =>
      it('finds the Collector', () => {
        throw new Error(`${otelcol.reason}; GYM_REQUIRE_TOOLS=1 turns this skip into a failure`);
      }),
    );
  else describe.skip(`${title} [skipped: ${otelcol.reason}]`, body);
}

/** The names of the rules of one generated file (`record:` or `alert:`, one line each, as generated). */
function ruleNames(path: 'prometheus/gym-recording.rules.yml' | 'prometheus/gym-alerts.rules.yml'): string[] {
  return [...generate()[path].matchAll(/^ {6}- (?:record|alert): (\S+)$/gm)].map((match) => match[1] as string);
}

interface JsonPanel {
  title: string;
  targets?: { expr: string; legendFormat?: string }[];
  panels?: JsonPanel[];
}

/** Every query of every panel (also inside rows), named `panel · legend`. */
function panelQueries(): { name: string; expr: string }[] {
  const { panels } = JSON.parse(generate()['grafana/gym-telemetry.json']) as { panels: JsonPanel[] };
  const visit = (list: readonly JsonPanel[]): { name: string; expr: string }[] =>
    list.flatMap((panel) => [
      ...(panel.targets ?? []).map((target) => ({
        name: `${panel.title} · ${target.legendFormat ?? ''}`,
        expr: target.expr,
      })),
      ...visit(panel.panels ?? []),
    ]);
  return visit(panels);
}

for (const strategy of STRATEGIES) {
  suite(`the rules, the dashboard and the alerts through a Collector (${strategy})`, () => {
    let dir = '';
    let url = '';
    let collector: ChildProcess | undefined;
    let prometheus: ChildProcess | undefined;
    let otlpEndpoint = '';
    let errors = '';
    const fleets: Fleet[] = [];
    let saturated: Fleet;
    let verifyFault: Fleet;
    let runId = '';
    let t0 = 0;
    const figures: string[] = [];
    const proved = new Set<string>();
    let saturatedAt = Number.POSITIVE_INFINITY;
    let refusingAt = Number.POSITIVE_INFINITY;

    const seconds = (): number => Math.round((performance.now() - t0) / 100) / 10;

    async function api<T>(path: string): Promise<T> {
      const response = await fetch(`${url}${path}`);
      const json = (await response.json()) as { status: string; data: T; error?: string };
      if (json.status !== 'success') throw new Error(`${path}: ${json.error}`);
      return json.data;
    }

    /** An instant query, now or at the poll of the alert history taken `at` seconds since the fleets started. */
    const query = (promql: string, at?: number): Promise<Sample[]> => {
      const time = at === undefined ? undefined : history.find((poll) => poll.at === at)?.unix;
      return api<{ result: Sample[] }>(
        `/api/v1/query?query=${encodeURIComponent(promql)}${time === undefined ? '' : `&time=${time}`}`,
      ).then((data) => data.result);
    };

    const alerts = (): Promise<Alert[]> => api<{ alerts: Alert[] }>('/api/v1/alerts').then((data) => data.alerts);

    async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
      const deadline = performance.now() + STATE_DEADLINE_MS;
      let last: unknown;
      for (;;) {
        try {
          const value = await check();
          if (value !== undefined) return value;
        } catch (error) {
          last = error;
        }
        if (performance.now() > deadline)
          throw new Error(`timed out waiting for ${what}${last ? ` (${String(last)})` : ''}\n${errors.slice(-1500)}`);
        await sleep(250);
      }
    }

    const matches = (alert: Alert, name: string, match: Record<string, string>): boolean =>
      alert.labels.alertname === name && Object.entries(match).every(([key, value]) => alert.labels[key] === value);

    // Every alert state from the start of the fleets on, polled every 250 ms: an alert whose fault ends
    // while a test waits for another is still seen to fire and resolve.
    const history: { at: number; unix: number; alerts: Alert[] }[] = [];
    let watching = true;
    let watcher: Promise<void> = Promise.resolve();
    async function watch(): Promise<void> {
      while (watching) {
        try {
          const unix = Date.now() / 1000;
          history.push({ at: seconds(), unix, alerts: await alerts() });
        } catch {
          // Prometheus busy: the next poll.
        }
        await sleep(250);
      }
    }

    /** Seconds since the fleets started at which `name` (with `match` labels) first fired, at or after `since`. */
    function firing(name: string, match: Record<string, string>, since = 0): Promise<number> {
      return until(
        `${name} ${JSON.stringify(match)} to fire`,
        () =>
          history.find(
            (poll) =>
              poll.at >= since && poll.alerts.some((alert) => alert.state === 'firing' && matches(alert, name, match)),
          )?.at,
      );
    }

    /** When `name` (with `match` labels) was first neither pending nor firing after it fired at `fired`. */
    function resolved(name: string, match: Record<string, string>, fired: number): Promise<number> {
      return until(
        `${name} ${JSON.stringify(match)} to resolve`,
        () => history.find((poll) => poll.at > fired && !poll.alerts.some((alert) => matches(alert, name, match)))?.at,
      );
    }

    /** Starts a demo fleet exporting OTLP to the Collector as service `service`, instance `instance`. */
    function startFleet(service: string, instance: string, args: readonly string[]): Fleet {
      const child = spawn(process.execPath, [ORCHESTRATOR, ...args], {
        env: {
          ...process.env,
          NEMO_GYM_OTEL_ENABLED: '',
          NEMO_GYM_OTEL_EXPORTER: '',
          NEMO_GYM_OTEL_RUN_ID: '',
          // Metrics only: the Collector has no traces pipeline.
          NEMO_GYM_OTEL_TRACES_ENABLED: '0',
          OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
          OTEL_METRIC_EXPORT_INTERVAL: EXPORT_INTERVAL_MS,
          OTEL_SERVICE_NAME: service,
          OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${instance}`,
        },
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      });
      const out = { stdout: '', stderr: '' };
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        out.stdout += chunk;
      });
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        out.stderr += chunk;
        errors += chunk;
      });
      const fleet = { child, out };
      fleets.push(fleet);
      return fleet;
    }

    /** A Gym server (Python): its process, its URL once ready, and its driver. */
    interface GymServer {
      readonly child: ChildProcess;
      readonly run: string;
      url: string;
      stderr: string;
      driving: Promise<void>;
    }
    const gymServers: GymServer[] = [];
    let gymStopped = false;

    async function post(url: string, body: unknown): Promise<void> {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    }

    /** Gym's example server under run id `run`, exporting OTLP to the Collector every second; resolves once it listens. */
    async function startGymServer(run: string): Promise<GymServer> {
      if (!('python' in oracle)) throw new Error(oracle.reason);
      const child = spawn(oracle.python, [oracle.server], {
        env: {
          ...process.env,
          GYM_ORACLE_SERVER_NAME: GYM_SERVER,
          NEMO_GYM_OTEL_ENABLED: '1',
          NEMO_GYM_OTEL_RUN_ID: run,
          NEMO_GYM_OTEL_TRACES_ENABLED: '0',
          OTEL_SERVICE_NAME: 'gym-python',
          OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
          OTEL_METRIC_EXPORT_INTERVAL: EXPORT_INTERVAL_MS,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const server: GymServer = { child, run, url: '', stderr: '', driving: Promise.resolve() };
      gymServers.push(server);
      let stdout = '';
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
      });
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        server.stderr = (server.stderr + chunk).slice(-4000);
      });
      server.url = await until(`Gym's server ${run} to listen`, () => {
        if (child.exitCode !== null) throw new Error(`Gym's server exited: ${server.stderr}`);
        const line = stdout.split('\n').find((candidate) => candidate.startsWith('{"type": "ready"'));
        return line === undefined ? undefined : (JSON.parse(line) as { url: string }).url;
      });
      // A tool call and a verify about ten times a second, a sandbox every tenth round, until it dies or the suite ends.
      server.driving = (async () => {
        for (let round = 0; !gymStopped && child.exitCode === null && child.signalCode === null; round++) {
          try {
            await post(`${server.url}/get_weather`, { city: 'Warsaw' });
            await post(`${server.url}/verify`, GYM_VERIFY);
            if (round % 10 === 0) await post(`${server.url}/oracle/sandbox`, {});
          } catch {
            if (child.exitCode !== null || child.signalCode !== null) return;
          }
          await sleep(100);
        }
      })();
      return server;
    }

    function pidOf(fleet: Fleet, name: string): number {
      const line = new RegExp(`${name}\\s+pid (\\d+)`).exec(fleet.out.stdout);
      if (line === null) throw new Error(`${name} not found in: ${fleet.out.stdout}`);
      return Number(line[1]);
    }

    /** Spawns `binary` under the demo's guardian (it dies with jest) and keeps its stderr. */
    function guarded(binary: string, args: readonly string[]): ChildProcess {
      const child = spawnGuarded(binary, args, dir);
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        errors += chunk;
      });
      return child;
    }

    async function ready(what: string, probe: string): Promise<void> {
      await until(what, async () => ((await fetch(probe)).ok ? true : undefined));
    }

    beforeAll(async () => {
      const binary = await findPrometheus();
      if (binary === undefined || !otelcol.found) throw new Error('prometheus and the Collector are required');
      dir = await mkdtemp(join(tmpdir(), 'gym-e2e-collector-'));
      const [otlpPort, exporterPort, prometheusPort] = [await freePort(), await freePort(), await freePort()];
      otlpEndpoint = `http://127.0.0.1:${otlpPort}`;
      // The Collector's configuration as docs/dashboards.md shows it, with ports and the expiration of the test.
      await writeFile(
        join(dir, 'otelcol.yaml'),
        [
          'receivers:',
          '  otlp:',
          `    protocols: { http: { endpoint: "127.0.0.1:${otlpPort}" } }`,
          'exporters:',
          '  prometheus:',
          `    endpoint: "127.0.0.1:${exporterPort}"`,
          `    translation_strategy: ${strategy}`,
          `    metric_expiration: ${METRIC_EXPIRATION}`,
          'service:',
          '  telemetry:',
          '    logs: { level: warn }',
          '    metrics: { level: none }',
          '  pipelines:',
          '    metrics: { receivers: [otlp], exporters: [prometheus] }',
          '',
        ].join('\n'),
      );
      collector = guarded(otelcol.path, [`--config=file:${join(dir, 'otelcol.yaml')}`]);
      await ready('the Collector', `http://127.0.0.1:${exporterPort}/metrics`);
      const files = rulesYaml({ timeScale: TIME_SCALE });
      await writeFile(join(dir, 'recording.yml'), files['prometheus/gym-recording.rules.yml']);
      await writeFile(join(dir, 'alerts.yml'), files['prometheus/gym-alerts.rules.yml']);
      await writeFile(
        join(dir, 'prometheus.yml'),
        [
          'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
          `rule_files: [${JSON.stringify(join(dir, 'recording.yml'))}, ${JSON.stringify(join(dir, 'alerts.yml'))}]`,
          'scrape_configs:',
          '  - job_name: otelcol',
          '    honor_labels: true',
          `    static_configs: [{ targets: ["127.0.0.1:${exporterPort}"] }]`,
          '',
        ].join('\n'),
      );
      url = `http://127.0.0.1:${prometheusPort}`;
      prometheus = guarded(binary, [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${prometheusPort}`,
        '--log.level=warn',
      ]);
      await ready('Prometheus', `${url}/-/ready`);
      // Two servers with one verify slot and a queue of two: saturated, refusing (see e2e-alerts.test.ts).
      saturated = startFleet('gym-saturated', 'fleet-a', [
        '--servers',
        '2',
        '--limit',
        '1',
        '--max-queued',
        '2',
        '--duration',
        String(SATURATED_LOAD_S),
        '--restarts',
        '0',
        '--hung-after-ms',
        '600000',
        '--linger',
        '600',
      ]);
      // One server whose verifies crash for the first 40 s of its load, then complete.
      verifyFault = startFleet('gym-verify-fault', 'fleet-b', [
        '--servers',
        '1',
        '--limit',
        '16',
        '--judge-limit',
        '8',
        '--verify-timeout-ms',
        '5000',
        '--fail-verifies-ms',
        String(FAIL_VERIFIES_MS),
        '--duration',
        String(VERIFY_LOAD_S),
        '--restarts',
        '0',
        '--hung-after-ms',
        '600000',
        '--linger',
        '600',
      ]);
      // The alerts are watched from the start of the fleets: a fault of their first seconds counts.
      t0 = performance.now();
      watcher = watch();
      if ('python' in oracle) await Promise.all(GYM_RUNS.map(startGymServer));
      await until('the load of both fleets', () =>
        saturated.out.stdout.includes('Load:') && verifyFault.out.stdout.includes('Load:') ? true : undefined,
      );
      runId = /run ([0-9a-zA-Z_-]+)/.exec(saturated.out.stdout)?.[1] ?? '';
    }, STATE_DEADLINE_MS + 30_000);

    afterAll(async () => {
      watching = false;
      gymStopped = true;
      await watcher;
      await Promise.all(gymServers.map((server) => server.driving));
      const children = [...fleets.map((fleet) => fleet.child), ...gymServers.map((server) => server.child)];
      for (const child of [...children, prometheus, collector]) {
        if (child === undefined || child.exitCode !== null || child.signalCode !== null) continue;
        const done = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await done;
        clearTimeout(force);
      }
      if (dir !== '') await rm(dir, { recursive: true, force: true });
      const expected = ['rules', 'data', 'saturation', 'refusal', 'failing verify', 'lost server'];
      if ('python' in oracle) expected.push('gym servers', 'gym server forgotten');
      const missing = expected.filter((what) => !proved.has(what));
      process.stdout.write(
        `collector figures under ${strategy} (s since the fleets started):\n${figures.join('\n')}\n` +
          (missing.length === 0
            ? `proved through the Collector under ${strategy}: every rule loaded, every recording rule and dashboard query returned data, saturation, refusal, failing-verify and lost-server alerts fired and resolved${
                'python' in oracle
                  ? `; Gym's own servers: ${[...proved].filter((what) => /gym|Gym/.test(what)).join(', ')}`
                  : ` (Gym's own servers not run: ${oracle.reason})`
              }\n`
            : `NOT proved through the Collector under ${strategy}: ${missing.join(', ')}\n`),
      );
    }, 60_000);

    it('loads every recording and alerting rule, and each evaluates without error', async () => {
      const names = [
        ...ruleNames('prometheus/gym-recording.rules.yml'),
        ...ruleNames('prometheus/gym-alerts.rules.yml'),
      ];
      const loaded = await until('every rule evaluated once', async () => {
        const { groups } = await api<{
          groups: { rules: { name: string; health: string; lastError?: string }[] }[];
        }>('/api/v1/rules');
        const rules = groups.flatMap((group) => group.rules);
        return rules.length === names.length && rules.every((rule) => rule.health !== 'unknown') ? rules : undefined;
      });
      expect(loaded.map((rule) => rule.name).sort()).toEqual(names.sort());
      expect(loaded.filter((rule) => rule.health !== 'ok').map((rule) => `${rule.name}: ${rule.lastError}`)).toEqual(
        [],
      );
      proved.add('rules');
    });

    it(
      'returns data from every recording rule and every dashboard query, for the servers behind the Collector',
      async () => {
        const checks = [
          ...ruleNames('prometheus/gym-recording.rules.yml').map((record) => ({ name: record, expr: record })),
          ...panelQueries().map(({ name, expr }) => ({
            name,
            expr: expr.replaceAll('$job', '.*').replaceAll('$server', '.*').replaceAll('$run_id', runId),
          })),
        ];
        expect(checks.length).toBeGreaterThan(40);
        let empty = checks.map((check) => check.name);
        try {
          await until('every recording rule and dashboard query to return data', async () => {
            const counts = await Promise.all(checks.map(async (check) => (await query(check.expr)).length));
            empty = checks.filter((_, i) => counts[i] === 0).map((check) => check.name);
            return empty.length === 0 ? true : undefined;
          });
        } catch {
          // The deadline passed: the expectation names what stayed empty.
        }
        expect(empty).toEqual([]);
        // The servers are told apart by the job and instance the Collector gave them, and named by target_info.
        const servers = await query(
          `max by (job, instance, nemo_gym_server_name) (target_info{job=~"gym-saturated/.*"})`,
        );
        expect(
          servers.map((s) => `${s.metric.job} ${s.metric.instance} ${s.metric.nemo_gym_server_name}`).sort(),
        ).toEqual([
          'gym-saturated/orchestrator fleet-a orchestrator',
          'gym-saturated/server-1 fleet-a server-1',
          'gym-saturated/server-2 fleet-a server-2',
        ]);
        figures.push(`${checks.length} recording rules and dashboard queries returned data at ${seconds()}`);
        proved.add('data');
      },
      STATE_DEADLINE_MS + 30_000,
    );

    it(
      'a saturated limit and refused verify calls fire GymConcurrencyLimitSaturated and GymAdmissionRefusing',
      async () => {
        const match = { job: 'gym-saturated/server-2', nemo_gym_concurrency_limit_name: 'verify_slots' };
        saturatedAt = await firing('GymConcurrencyLimitSaturated', match);
        figures.push(`GymConcurrencyLimitSaturated fired ${saturatedAt}`);
        refusingAt = await firing('GymAdmissionRefusing', match);
        figures.push(`GymAdmissionRefusing fired ${refusingAt}`);
      },
      STATE_DEADLINE_MS * 2,
    );

    it(
      'verifies that crash fire GymVerifySuccessDropping and GymOperationsFailing, which resolve once verifies complete again',
      async () => {
        const job = 'gym-verify-fault/server-1';
        const failing = (async () => {
          const match = { job, nemo_gym_resources_operation: 'verify' };
          const fired = await firing('GymOperationsFailing', match);
          return `GymOperationsFailing (verify failing until ${FAIL_VERIFIES_MS / 1000}) fired ${fired}, resolved ${await resolved('GymOperationsFailing', match, fired)}`;
        })();
        failing.catch(() => undefined);
        const fired = await firing('GymVerifySuccessDropping', { job });
        const resolvedAt = await resolved('GymVerifySuccessDropping', { job }, fired);
        // Resolved because verifies complete again, not because the series went away: the ratio when it resolved.
        const [ratio] = await query(`instance:gym_verify_success_rate:ratio_rate5m{job="${job}"}`, resolvedAt);
        figures.push(
          `GymVerifySuccessDropping (failing until ${FAIL_VERIFIES_MS / 1000}) fired ${fired}, resolved ${resolvedAt} (windowed ratio then ${ratio?.value[1]})`,
        );
        expect(Number(ratio?.value[1])).toBeGreaterThanOrEqual(0.9);
        figures.push(await failing);
        proved.add('failing verify');
      },
      STATE_DEADLINE_MS * 3,
    );

    it(
      'a killed server (no restart) is seen through the Collector: GymTargetsAbsent for its job, GymFleetShrank; a server back on the job resolves it',
      async () => {
        const job = 'gym-saturated/server-1';
        const killedAt = seconds();
        process.kill(pidOf(saturated, 'server-1'), 'SIGKILL');
        // `up` is the Collector's, and stays 1 all along.
        const absentAt = await firing('GymTargetsAbsent', { job }, killedAt);
        figures.push(`GymTargetsAbsent (SIGKILL at ${killedAt}) fired ${absentAt}`);
        figures.push(
          `GymFleetShrank (SIGKILL at ${killedAt}) fired ${await firing('GymFleetShrank', { job: 'gym-saturated/orchestrator' }, killedAt)}`,
        );
        expect((await query('up{job="otelcol"}')).map((s) => s.value[1])).toEqual(['1']);
        const startedAt = seconds();
        const back = startFleet('gym-saturated', 'fleet-a-again', [
          '--servers',
          '1',
          '--duration',
          '1',
          '--restarts',
          '0',
          '--linger',
          '600',
        ]);
        figures.push(
          `GymTargetsAbsent (a fleet on the job again at ${startedAt}) resolved ${await resolved('GymTargetsAbsent', { job }, absentAt)}`,
        );
        const exited = new Promise((resolve) => back.child.once('exit', resolve));
        back.child.kill('SIGTERM');
        await exited;
        proved.add('lost server');
      },
      STATE_DEADLINE_MS * 2,
    );

    /** A test of Gym's servers: skipped without the oracle, failing instead under GYM_REQUIRE_TOOLS=1 when the tree has it. */
    function gymIt(title: string, body: () => Promise<void>, timeout: number): void {
      if ('python' in oracle) it(title, body, timeout);
      else if (process.env.GYM_REQUIRE_TOOLS === '1' && existsSync(join(ROOT, 'tools/gym-oracle')))
        it(title, () => {
          throw new Error(`${oracle.reason}; GYM_REQUIRE_TOOLS=1 turns this skip into a failure`);
        });
      else it.skip(`${title} [skipped: ${oracle.reason}]`, body);
    }

    gymIt(
      "Gym's own servers (NeMo Gym 0.7.0, Python) beside them: named by target_info, and every rule and panel Gym's families feed returns data for each",
      async () => {
        // Gym 0.7.0's resources server records verify and sandbox telemetry (no limits, operations
        // or runtime observer: see the parity table in docs/telemetry.md); a sandbox create retry
        // never happens with its local provider.
        const fed = ruleNames('prometheus/gym-recording.rules.yml').filter((name) =>
          /gym_target:up|gym_verify_|gym_sandbox_(startup|exec)_/.test(name),
        );
        const panels = panelQueries()
          .filter(({ name }) => /^(Verify|Sandbox)/.test(name) && !name.includes('create retries'))
          .map(({ name, expr }) => ({
            name,
            expr: expr.replaceAll('$job', GYM_JOB).replaceAll('$server', GYM_SERVER).replaceAll('$run_id', '.*'),
          }));
        expect(fed.length).toBeGreaterThanOrEqual(7);
        expect(panels.length).toBeGreaterThanOrEqual(8);
        let empty: string[] = [];
        try {
          await until("every rule and panel Gym's families feed to return data for both Gym servers", async () => {
            const rules = await Promise.all(
              fed.map(async (name) => (await query(`count by (instance) (${name}{job="${GYM_JOB}"})`)).length),
            );
            const shown = await Promise.all(panels.map(async ({ expr }) => (await query(expr)).length));
            empty = [
              ...fed.filter((_, i) => rules[i] !== GYM_RUNS.length),
              ...panels.filter((_, i) => shown[i] === 0).map(({ name }) => name),
            ];
            return empty.length === 0 ? true : undefined;
          });
        } catch {
          // The deadline passed: the expectation names what stayed empty.
        }
        expect(empty).toEqual([]);
        const servers = await query(
          `max by (instance, nemo_gym_server_name, nemo_run_id) (target_info{job="${GYM_JOB}"})`,
        );
        expect(
          servers.map((s) => `${s.metric.instance} ${s.metric.nemo_gym_server_name} ${s.metric.nemo_run_id}`).sort(),
        ).toEqual(GYM_RUNS.map((run) => `${run}-rank0 ${GYM_SERVER} ${run}`));
        figures.push(
          `Gym's servers (${GYM_JOB}, instances ${GYM_RUNS.map((run) => `${run}-rank0`).join(', ')}): ${fed.length} recorded series and ${panels.length} panel queries returned data for each at ${seconds()}`,
        );
        proved.add('gym servers');
      },
      STATE_DEADLINE_MS + 30_000,
    );

    gymIt(
      "one of two Gym servers of a job killed behind the Collector: the Collector forgets it; the topology's liveness alert, where the rules have one, fires and resolves when it is back",
      async () => {
        const victim = gymServers.find((server) => server.run === GYM_RUNS[1]);
        if (victim === undefined) throw new Error("Gym's servers did not start");
        const instance = `${victim.run}-rank0`;
        const alert = 'GymServerLostBehindCollector';
        const liveness = ruleNames('prometheus/gym-alerts.rules.yml').includes(alert);
        // That alert compares with the most servers present for 10 minutes in a row (40 s here): both must have been.
        const steady = 'job:target_info:instances_min10m';
        if (liveness && ruleNames('prometheus/gym-recording.rules.yml').includes(steady))
          await until(`both Gym servers present for the alert's memory (${steady})`, async () =>
            (await query(`${steady}{job="${GYM_JOB}"} >= ${GYM_RUNS.length}`)).length > 0 ? true : undefined,
          );
        const killedAt = seconds();
        victim.child.kill('SIGKILL');
        // The Collector forgets it after metric_expiration; Prometheus then drops its target_info.
        const goneAt = await until(`the target_info of ${instance} to go`, async () =>
          (await query(`target_info{job="${GYM_JOB}",instance="${instance}"}`)).length === 0 ? seconds() : undefined,
        );
        figures.push(
          `${GYM_JOB} ${instance} (SIGKILL at ${killedAt}): its target_info gone from the Collector's scrape at ${goneAt}`,
        );
        let firedAt = 0;
        if (liveness) {
          firedAt = await firing(alert, { job: GYM_JOB }, killedAt);
          figures.push(`${alert} (SIGKILL at ${killedAt}) fired ${firedAt}`);
        } else {
          figures.push(
            `no liveness alert for one of several servers of a job behind a Collector in these rules (${alert} is not there)`,
          );
        }
        const startedAt = seconds();
        await startGymServer(victim.run);
        await until(`the target_info of ${instance} to be back`, async () =>
          (await query(`target_info{job="${GYM_JOB}",instance="${instance}"}`)).length === 1 ? true : undefined,
        );
        if (liveness)
          figures.push(
            `${alert} (started again at ${startedAt}) resolved ${await resolved(alert, { job: GYM_JOB }, firedAt)}`,
          );
        proved.add('gym server forgotten');
        if (liveness) proved.add(`${alert} fired and resolved`);
      },
      STATE_DEADLINE_MS * 2,
    );

    it(
      'the surviving server’s saturation and refusal alerts resolve once the load ends',
      async () => {
        const match = { job: 'gym-saturated/server-2', nemo_gym_concurrency_limit_name: 'verify_slots' };
        await until('the end of the load', () =>
          saturated.out.stdout.includes('The fleet stays up') ? true : undefined,
        );
        const endedAt = seconds();
        figures.push(
          `GymConcurrencyLimitSaturated (load ended at ${endedAt}) resolved ${await resolved('GymConcurrencyLimitSaturated', match, Math.max(saturatedAt, endedAt))}`,
        );
        proved.add('saturation');
        figures.push(
          `GymAdmissionRefusing (load ended at ${endedAt}) resolved ${await resolved('GymAdmissionRefusing', match, Math.max(refusingAt, endedAt))}`,
        );
        proved.add('refusal');
      },
      STATE_DEADLINE_MS * 3,
    );
  });
}
