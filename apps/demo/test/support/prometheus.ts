// One real Prometheus per end-to-end test file: the demo's own `--prometheus` helper (loopback,
// temporary storage, 1 s scrapes, the @gym/dashboards rules loaded), so the tests exercise the
// same code a user runs, plus a PromQL query over its HTTP API.

import { writeFile } from 'node:fs/promises';
import { type LocalPrometheus, startLocalPrometheus } from '../../src/local-prometheus.js';

/** One instant-vector sample as the HTTP API returns it. */
export interface Vector {
  metric: Record<string, string>;
  value: [number, string];
}

/** Starts Prometheus; fails when none is on PATH (the suites that call it skip first: requireTools). */
export async function startPrometheus(): Promise<LocalPrometheus> {
  const prometheus = await startLocalPrometheus();
  if (prometheus === undefined)
    throw new Error(
      'prometheus is not on PATH (Debian/Ubuntu: apt-get install prometheus; Homebrew: brew install prometheus)',
    );
  return prometheus;
}

/** Points `prometheus` at one scrape endpoint (a full URL, path included) through its file_sd file. */
export async function scrapeOnly(prometheus: LocalPrometheus, endpoint: string): Promise<void> {
  const url = new URL(endpoint);
  await writeFile(
    prometheus.targetsFile,
    JSON.stringify([{ targets: [url.host], labels: { __metrics_path__: url.pathname } }]),
  );
}

/** The result of an instant query; a PromQL error fails the test with Prometheus' message. */
export async function query(prometheus: LocalPrometheus, promql: string): Promise<Vector[]> {
  const response = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const json = (await response.json()) as { status: string; data?: { result: Vector[] }; error?: string };
  if (json.status !== 'success') throw new Error(`${promql}: ${json.error}`);
  return json.data?.result ?? [];
}
