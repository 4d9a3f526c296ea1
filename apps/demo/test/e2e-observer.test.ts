// End to end: a built demo server with telemetry on (Prometheus exporter) shows the observer's
// series on its scrape endpoint: event-loop lag, the process.* and in-flight series, and
// in-flight following two slow real requests up and back to 0. A real Prometheus (loopback,
// temporary storage, 1 s scrapes) then reads the same series through PromQL.

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { freePort } from './support/free-port.js';
import { prometheusEnv, startServer, type TestServer, terminate, waitFor } from './support/processes.js';

const PROMETHEUS = '/usr/bin/prometheus';
const NAME = 'observer_e2e';
let server: TestServer | undefined;
let prometheus: ChildProcess | undefined;
let prometheusUrl = '';
let dir = '';

beforeAll(async () => {
  if (!existsSync(PROMETHEUS)) throw new Error(`${PROMETHEUS} is required for this test`);
  server = await startServer(
    ['--name', NAME, '--judge-limit', '4', '--judge-latency-ms', '1500'],
    prometheusEnv(await freePort()),
  );
  const target = new URL(server.metrics!);
  dir = await mkdtemp(join(tmpdir(), 'gym-observer-e2e-'));
  const config = join(dir, 'prometheus.yml');
  await writeFile(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: gym-observer',
      `    metrics_path: ${target.pathname}`,
      '    static_configs:',
      `      - targets: ['${target.host}']`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  prometheusUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: 'ignore' },
  );
}, 30_000);

afterAll(async () => {
  await terminate(prometheus);
  await terminate(server?.process.child);
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

interface Vector {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(promql: string): Promise<Vector[]> {
  const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const json = (await response.json()) as { status: string; data?: { result: Vector[] }; error?: string };
  if (json.status !== 'success') throw new Error(`${promql}: ${json.error}`);
  return json.data?.result ?? [];
}

async function scrape(): Promise<string> {
  const response = await fetch(server!.metrics!);
  return response.text();
}

/** The value of the one sample of `name` whose labels include every `labels` pair, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = text
    .split('\n')
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && wanted.every((pair) => l.includes(pair)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const inFlight = (text: string) => sample(text, 'gym_server_requests_in_flight', { nemo_gym_server_name: NAME });

it('the scrape endpoint shows the observer series and in-flight requests coming and going', async () => {
  expect(server?.metrics).toEqual(expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\//));
  const first = await waitFor(
    'the lag histogram',
    async () => {
      const text = await scrape();
      return (sample(text, 'gym_event_loop_lag_ms_count') ?? 0) > 0 ? text : undefined;
    },
    15_000,
  );
  expect(sample(first, 'gym_event_loop_lag_ms_bucket', { le: '10000' })).toBeGreaterThan(0);
  expect(sample(first, 'process_cpu_time_total', { cpu_mode: 'user' })).toBeGreaterThan(0);
  expect(sample(first, 'process_cpu_time_total', { cpu_mode: 'system' })).toBeGreaterThanOrEqual(0);
  expect(sample(first, 'process_memory_usage')).toBeGreaterThan(1_000_000);
  if (process.platform === 'linux') {
    expect(sample(first, 'process_open_file_descriptor_count')).toBeGreaterThan(0);
    expect(sample(first, 'process_thread_count')).toBeGreaterThan(1);
  }
  expect(inFlight(first)).toBe(0);

  const judge = () =>
    fetch(`${server!.url}/judge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a slow judge', response: 'slow' }),
    }).then((r) => r.status);
  const calls = [judge(), judge()];
  await waitFor('two requests in flight', async () => (inFlight(await scrape()) === 2 ? true : undefined), 5_000, 50);
  const statuses = await Promise.all(calls);
  expect(statuses.every((s) => s === 200 || s === 502)).toBe(true);
  await waitFor('in flight back to 0', async () => (inFlight(await scrape()) === 0 ? true : undefined), 5_000, 50);
}, 60_000);

it('a real Prometheus reads the observer series', async () => {
  const lag = await waitFor(
    'Prometheus to scrape the lag histogram',
    async () => {
      const result = await query('gym_event_loop_lag_ms_count{job="gym-observer"}');
      return result.length === 1 && Number(result[0]!.value[1]) > 0 ? result : undefined;
    },
    30_000,
    250,
  );
  expect(lag[0]!.metric.otel_scope_name).toBe('@gym/observer');
  const p99 = await query('histogram_quantile(0.99, gym_event_loop_lag_ms_bucket{job="gym-observer"})');
  expect(p99).toHaveLength(1);
  const inFlight = await query(`gym_server_requests_in_flight{nemo_gym_server_name="${NAME}"}`);
  expect(inFlight.map((v) => Number(v.value[1]))).toEqual([0]);
  const cpu = await query('process_cpu_time_total{job="gym-observer"}');
  expect(cpu.map((v) => v.metric.cpu_mode).sort()).toEqual(['system', 'user']);
  expect(await query('process_memory_usage{job="gym-observer"}')).toHaveLength(1);
}, 60_000);
