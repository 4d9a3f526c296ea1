// End to end: a built demo server with telemetry on (Prometheus exporter) calls its fake judge
// over an undici Pool of half the judge gate's slots, so four judge calls at once put two in
// the pool's queue. Its scrape endpoint then shows the connection-pool series of
// `@gym/http-pool` under the destination name `judge`: one wait point per queued call and
// every call in connect_total.

import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { freePort } from './support/free-port.js';
import { prometheusEnv, startServer, type TestServer, terminate, waitFor } from './support/processes.js';

let server: TestServer | undefined;

beforeAll(async () => {
  // Judge calls take 1 to 3 s: the first two hold both pool connections while the other two
  // are sent, however slowly this machine runs.
  server = await startServer(
    ['--name', 'pool_e2e', '--judge-limit', '4', '--judge-latency-ms', '2000'],
    prometheusEnv(await freePort()),
  );
}, 60_000);

afterAll(async () => {
  await terminate(server?.process.child);
});

/** The value of the one sample of `name` whose labels include every `labels` pair, or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((pair) => l.includes(pair)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

it('judge calls beyond the pool queue for a connection, and the scrape shows the waits', async () => {
  const judge = () =>
    fetch(`${server!.url}/judge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a pooled judge', response: 'pooled' }),
    }).then((r) => r.status);
  const statuses = await Promise.all([judge(), judge(), judge(), judge()]);
  expect(statuses.every((s) => s === 200 || s === 502)).toBe(true);

  const destination = { nemo_gym_http_destination_server_name: 'judge' };
  const text = await waitFor(
    'the connection-pool series on the scrape',
    async () => {
      const scraped = await (await fetch(server!.metrics!)).text();
      return (sample(scraped, 'gym_http_connection_pool_connect_total', destination) ?? 0) >= 4 ? scraped : undefined;
    },
    15_000,
    100,
  );
  expect(sample(text, 'gym_http_connection_pool_connect_total', destination)).toBe(4);
  const queued = {
    ...destination,
    nemo_gym_http_connection_pool_queue_constraint: 'per_host',
    nemo_gym_http_connection_pool_queue_outcome: 'ok',
  };
  expect(sample(text, 'gym_http_connection_pool_queue_duration_ms_count', queued)).toBe(2);
  expect(sample(text, 'gym_http_connection_pool_queue_duration_ms_sum', queued)).toBeGreaterThan(0);
}, 60_000);
