// End to end with a real Prometheus: the built orchestrator spawns a fleet with a verify
// limit of one slot per server, writes its metrics endpoints to a file_sd file, drives the
// load and then lingers; a Prometheus started here (loopback, temporary storage, 1 s
// scrapes) collects everything; the assertions are PromQL over its HTTP API, i.e. exactly
// what a dashboard would see.

import { requireTools } from '@gym/test-kit';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { LocalPrometheus } from '../src/local-prometheus.js';
import { type Captured, distFile, exited, isAlive, spawnNode, terminate, waitFor } from './support/processes.js';
import { query as promQuery, startPrometheus, type Vector } from './support/prometheus.js';

const SERVERS = 3;

let prometheus: LocalPrometheus | undefined;
let orchestrator: Captured | undefined;
let serverPids: number[] = [];

function query(promql: string): Promise<Vector[]> {
  return promQuery(prometheus!, promql);
}

async function scalar(promql: string): Promise<number> {
  const result = await query(promql);
  if (result.length !== 1) throw new Error(`${promql}: expected one series, got ${result.length}`);
  return Number(result[0]?.value[1]);
}

beforeAll(async () => {
  prometheus = await startPrometheus();
  const targets = prometheus.targetsFile;
  orchestrator = spawnNode(
    distFile('orchestrator.js'),
    ['--servers', String(SERVERS), '--limit', '1', '--duration', '8', '--targets-file', targets, '--linger', '45'],
    {
      ...process.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      NEMO_GYM_OTEL_ENABLED: '',
      NEMO_GYM_OTEL_EXPORTER: '',
      NEMO_GYM_OTEL_RUN_ID: '',
    },
  );
  const started = orchestrator;
  // The summary is printed when the load is over; from then on the fleet only lingers.
  await waitFor(
    'the orchestrator summary',
    () => {
      if (started.child.exitCode !== null) throw new Error(`orchestrator exited early: ${started.stderr}`);
      return started.stdout.includes('The fleet stays up') ? true : undefined;
    },
    90_000,
  );
  serverPids = [...started.stdout.matchAll(/server-\d+\s+pid (\d+)/g)].map((match) => Number(match[1]));
  const loadEnded = Date.now() / 1000;
  // Wait for a scrape of all four endpoints (orchestrator + servers) that happened after the load ended.
  await waitFor(
    'Prometheus to scrape the whole fleet after the load',
    async () => {
      const up = await query('up');
      const fresh = await query(`timestamp(up) > ${loadEnded}`);
      return up.length === SERVERS + 1 && up.every((series) => series.value[1] === '1') && fresh.length === SERVERS + 1
        ? true
        : undefined;
    },
    20_000,
    250,
  );
}, 150_000);

afterAll(async () => {
  await terminate(orchestrator?.child);
  await prometheus?.stop();
});

requireTools('prometheus').describe('the demo fleet as Prometheus sees it', () => {
  it('exports the queue-duration series by operation and executor', async () => {
    const series = await query(
      'count by (nemo_gym_resources_operation, nemo_gym_resources_executor) (gym_resources_operation_queue_duration_ms_bucket)',
    );
    const pairs = series
      .map((entry) => `${entry.metric.nemo_gym_resources_operation}/${entry.metric.nemo_gym_resources_executor}`)
      .sort();
    expect(pairs).toEqual(['judge/inline', 'tool/inline', 'verify/subprocess']);
  });

  it('shows verify waiting longer for its one slot than it runs (p99)', async () => {
    const queue = await scalar(
      'histogram_quantile(0.99, sum by (le) (gym_resources_operation_queue_duration_ms_bucket{nemo_gym_resources_operation="verify"}))',
    );
    const run = await scalar(
      'histogram_quantile(0.99, sum by (le) (gym_resources_operation_duration_ms_bucket{nemo_gym_resources_operation="verify"}))',
    );
    expect(run).toBeGreaterThan(0);
    expect(queue).toBeGreaterThan(run);
  });

  it('records the timeout and crashed outcomes of verify', async () => {
    const outcomes = await query(
      'sum by (nemo_gym_resources_operation_outcome) (gym_resources_operation_duration_ms_count{nemo_gym_resources_operation="verify"})',
    );
    const counts = Object.fromEntries(
      outcomes.map((entry) => [entry.metric.nemo_gym_resources_operation_outcome, Number(entry.value[1])]),
    );
    expect(counts.timeout).toBeGreaterThanOrEqual(1);
    expect(counts.crashed).toBeGreaterThanOrEqual(1);
    expect(counts.ok).toBeGreaterThan(counts.timeout ?? 0);
  });

  it('has gym_servers_active equal to the number of servers, from the orchestrator alone', async () => {
    const series = await query('gym_servers_active');
    expect(series).toHaveLength(1);
    expect(Number(series[0]?.value[1])).toBe(SERVERS);
  });

  it('has a verify success rate between 0 and 1 on every server', async () => {
    const series = await query('gym_verify_success_rate');
    expect(series).toHaveLength(SERVERS);
    for (const entry of series) {
      const rate = Number(entry.value[1]);
      expect(rate).toBeGreaterThanOrEqual(0);
      expect(rate).toBeLessThanOrEqual(1);
    }
  });

  it('exports the sandbox lifecycle series by provider, and the metered limits', async () => {
    const startups = await query('sum by (nemo_gym_sandbox_provider) (gym_sandbox_startup_duration_ms_count)');
    expect(startups.length).toBeGreaterThanOrEqual(1);
    expect(startups.every((entry) => /^[a-z0-9][a-z0-9_.-]*$/.test(entry.metric.nemo_gym_sandbox_provider ?? ''))).toBe(
      true,
    );
    expect(Number(startups[0]?.value[1])).toBeGreaterThanOrEqual(1);
    const transfers = await query('sum by (nemo_gym_sandbox_provider) (gym_sandbox_transfer_duration_ms_count)');
    expect(transfers.map((entry) => entry.metric.nemo_gym_sandbox_provider)).toEqual(['local-process']);
    const active = await query('gym_sandbox_active');
    expect(active.length).toBeGreaterThanOrEqual(1);
    for (const entry of active) expect(Number(entry.value[1])).toBeGreaterThanOrEqual(0);
    const limits = await query('gym_concurrency_limit');
    expect(new Set(limits.map((entry) => entry.metric.nemo_gym_concurrency_limit_name))).toEqual(
      new Set(['verify_slots', 'tool_slots', 'judge_slots']),
    );
  });

  it('stops every server when the orchestrator gets SIGTERM', async () => {
    expect(serverPids).toHaveLength(SERVERS);
    const child = orchestrator!.child;
    child.kill('SIGTERM');
    const { code } = await exited(child);
    expect(code).toBe(0);
    expect(orchestrator!.stdout).toContain('Done; every server stopped.');
    for (const pid of serverPids) expect(isAlive(pid)).toBe(false);
  });
});
