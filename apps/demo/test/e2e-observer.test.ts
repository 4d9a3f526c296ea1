// End to end: a built demo server with telemetry on (Prometheus exporter) shows the observer's
// series on its scrape endpoint: event-loop lag, the process.* and in-flight series, and
// in-flight following two slow real requests up and back to 0. A real Prometheus (loopback,
// temporary storage, 1 s scrapes) then reads the same series through PromQL.

import { requireTools } from '@gym/test-kit';
import { afterAll, beforeAll, expect } from '@jest/globals';
import type { LocalPrometheus } from '../src/local-prometheus.js';
import { freePort } from './support/free-port.js';
import { prometheusEnv, startServer, type TestServer, terminate, waitFor } from './support/processes.js';
import { query as promQuery, scrapeOnly, startPrometheus, type Vector } from './support/prometheus.js';

const { it } = requireTools('prometheus');
const NAME = 'observer_e2e';
let server: TestServer | undefined;
let prometheus: LocalPrometheus | undefined;

function query(promql: string): Promise<Vector[]> {
  return promQuery(prometheus!, promql);
}

beforeAll(async () => {
  server = await startServer(
    // Judges take 2 to 6 s (half to one and a half times the mean): both stay in flight for
    // seconds, so a scrape sees them together however slowly this machine scrapes.
    ['--name', NAME, '--judge-limit', '4', '--judge-latency-ms', '4000'],
    prometheusEnv(await freePort()),
  );
  prometheus = await startPrometheus();
  await scrapeOnly(prometheus, server.metrics!);
}, 60_000);

afterAll(async () => {
  await prometheus?.stop();
  await terminate(server?.process.child);
});

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
  // CPU time counts from the observer's first collection (its first point covers no time).
  expect(sample(first, 'process_cpu_time_total', { cpu_mode: 'user' })).toBeGreaterThanOrEqual(0);
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
  // The server has worked since the first collection: that CPU is counted.
  expect(sample(await scrape(), 'process_cpu_time_total', { cpu_mode: 'user' })).toBeGreaterThan(0);
}, 60_000);

it('a real Prometheus reads the observer series', async () => {
  const lag = await waitFor(
    'Prometheus to scrape the lag histogram',
    async () => {
      const result = await query('gym_event_loop_lag_ms_count{job="gym-demo"}');
      return result.length === 1 && Number(result[0]!.value[1]) > 0 ? result : undefined;
    },
    30_000,
    250,
  );
  expect(lag[0]!.metric.otel_scope_name).toBe('@gym/observer');
  const p99 = await query('histogram_quantile(0.99, gym_event_loop_lag_ms_bucket{job="gym-demo"})');
  expect(p99).toHaveLength(1);
  // Prometheus may have last scraped while the slow judges above were in flight: wait for a
  // scrape after they ended (one series, back at 0) rather than bet on when the last one was.
  const inFlight = await waitFor(
    'Prometheus to scrape in-flight back at 0',
    async () => {
      const result = await query(`gym_server_requests_in_flight{nemo_gym_server_name="${NAME}"}`);
      return result.length === 1 && Number(result[0]!.value[1]) === 0 ? result : undefined;
    },
    30_000,
    250,
  );
  expect(inFlight.map((v) => Number(v.value[1]))).toEqual([0]);
  const cpu = await query('process_cpu_time_total{job="gym-demo"}');
  expect(cpu.map((v) => v.metric.cpu_mode).sort()).toEqual(['system', 'user']);
  expect(await query('process_memory_usage{job="gym-demo"}')).toHaveLength(1);
}, 60_000);
