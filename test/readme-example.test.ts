// The top-level README's "Instrument your server" example, run for real in every case the
// README names: telemetry off, NEMO_GYM_OTEL_ENABLED=1 (OTLP to a real receiver on 127.0.0.1),
// the Prometheus exporter (a real scrape), an OpenTelemetry SDK the user set up first (with Gym
// telemetry on, and off). The example's code is run verbatim in a child process (Node strips
// its types), on the built packages, and stopped with SIGTERM as the example expects.
// The bootstrap needs Node >= 22.15; on an older Node this file is skipped, saying so.

import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INSTRUMENTS } from '@gym/constants';
import { decodeOtlpMetrics } from '@gym/test-kit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOtlpReceiver } from '../packages/otel-bootstrap/test/helpers/otlp-receiver.js';

const repo = new URL('..', import.meta.url).pathname;
const readme = readFileSync(join(repo, 'README.md'), 'utf8');
const example = /## Instrument your server\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const supported = major > 22 || (major === 22 && minor >= 15);
const describeExample = supported ? describe : describe.skip;

// Inside the repository, so that `@gym/*` resolve to the workspace packages (built dist);
// made only when the examples run (a skipped file runs no hooks, and would leave it behind).
let dir = '';

/**
 * The file URL of the bootstrap's own copy of `@opentelemetry/<pkg>`: a user's SDK must share
 * the bootstrap's API copy. Node itself resolves it, as an `import` from the bootstrap's folder,
 * so it holds wherever npm placed the package (hoisted to the root or nested in the bootstrap).
 */
function otel(pkg: string): string {
  const found = spawnSync(
    process.execPath,
    ['--input-type=module', '--eval', `process.stdout.write(import.meta.resolve('@opentelemetry/${pkg}'))`],
    { cwd: join(repo, 'packages', 'otel-bootstrap'), encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
  );
  if (found.status !== 0 || !found.stdout.startsWith('file:')) {
    throw new Error(`cannot resolve @opentelemetry/${pkg} from the bootstrap: ${found.stderr}`);
  }
  return found.stdout;
}

/** The user's side of the example: their task type and verifier; optionally their own SDK first. */
function prelude(ownSdk: boolean): string {
  const sdk = ownSdk
    ? `import { metrics as userMetrics } from ${JSON.stringify(otel('api'))};
import { MeterProvider, MetricReader } from ${JSON.stringify(otel('sdk-metrics'))};
class UserReader extends MetricReader { async onForceFlush() {} async onShutdown() {} }
const userReader = new UserReader();
userMetrics.setGlobalMeterProvider(new MeterProvider({ readers: [userReader] }));
globalThis.userReader = userReader;
`
    : '';
  return `${sdk}type Task = { id: string };
async function runVerifier(task: Task, signal: AbortSignal): Promise<boolean> {
  signal.throwIfAborted();
  if (task.id === 'boom') throw new Error('verifier crashed');
  return task.id !== '1';
}
`;
}

/** After the example: three verifies and one that throws; report, then wait for SIGTERM. */
const epilogue = `
const results: unknown[] = [];
for (const id of ['0', '1', '2', 'boom']) {
  results.push(await verify({ id }, AbortSignal.timeout(10_000)).catch((error: Error) => \`threw \${error.message}\`));
}
const { getTelemetry } = await import('@gym/otel-bootstrap');
const handle = getTelemetry();
let scraped = '';
if (handle?.prometheusEndpoint) scraped = await (await fetch(handle.prometheusEndpoint)).text();
let userMetricNames: string[] = [];
const reader = (globalThis as { userReader?: { collect(): Promise<{ resourceMetrics: { scopeMetrics: { metrics: { descriptor: { name: string } }[] }[] } }> } }).userReader;
if (reader) {
  const { resourceMetrics } = await reader.collect();
  userMetricNames = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics.map((metric) => metric.descriptor.name));
}
// A server's listening socket keeps it alive until SIGTERM; this timer stands in for it.
setInterval(() => {}, 60_000);
process.stdout.write(JSON.stringify({ results, handle: handle && { metricsExporting: handle.metricsExporting, prometheusPort: handle.config.prometheusPort, gymResourceApplied: handle.gymResourceApplied }, scraped, userMetricNames }) + '\\n');
`;

interface Outcome {
  readonly report: {
    results: unknown[];
    handle: { metricsExporting: boolean; prometheusPort: number; gymResourceApplied: boolean } | null;
    scraped: string;
    userMetricNames: string[];
  };
  readonly code: number | null;
  readonly stderr: string;
}

let counter = 0;

/** Runs the example with `env`; once it has reported, sends SIGTERM and waits for its exit. */
async function runExample(env: NodeJS.ProcessEnv, ownSdk = false): Promise<Outcome> {
  counter += 1;
  const file = join(dir, `example-${counter}.mts`);
  writeFileSync(file, `${prelude(ownSdk)}${example}${epilogue}`);
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(NEMO_GYM_|NEMO_LENS_|OTEL_|NODE_OPTIONS$)/.test(name)),
  );
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [file], {
    cwd: dir,
    env: { ...clean, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('\n')) child.kill('SIGTERM');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (!stdout.includes('\n')) throw new Error(`the example did not report (exit ${code}): ${stderr}`);
  return { report: JSON.parse(stdout.split('\n')[0] as string) as Outcome['report'], code, stderr };
}

const EXPECTED_RESULTS = [true, false, true, 'threw verifier crashed'];
// The scraped count of verifies over all label sets: what was recorded, however attributes split it.
const verifyCount = (scraped: string) =>
  [...scraped.matchAll(/^gym_verify_duration_ms_count(?:\{[^}]*\})? (\S+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
const warnings = (stderr: string) => stderr.split('\n').filter((line) => line.includes('GymTelemetryWarning'));

describeExample('the README example (skipped on Node < 22.15: the bootstrap needs it)', () => {
  beforeAll(() => {
    dir = mkdtempSync(join(repo, 'test', '.readme-example-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('telemetry off: same results and errors, nothing recorded, nothing said, exit 0 on SIGTERM', async () => {
    const { report, code, stderr } = await runExample({});
    expect(report).toEqual({ results: EXPECTED_RESULTS, handle: null, scraped: '', userMetricNames: [] });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  }, 60_000);

  it('NEMO_GYM_OTEL_ENABLED=1: the verifies reach a real OTLP receiver, flushed on SIGTERM', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const url = receiver.url;
      const { report, code, stderr } = await runExample({
        NEMO_GYM_OTEL_ENABLED: '1',
        OTEL_EXPORTER_OTLP_ENDPOINT: url,
      });
      expect(report.results).toEqual(EXPECTED_RESULTS);
      expect(report.handle).toMatchObject({ metricsExporting: true, gymResourceApplied: true });
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      const metrics = receiver.requests
        .filter((request) => request.path === '/v1/metrics')
        .flatMap((request) => decodeOtlpMetrics(request.body))
        .flatMap((block) => block.scopes.flatMap((scope) => scope.items));
      const verify = metrics.find((metric) => metric.name === INSTRUMENTS.verifyDuration.name);
      // Four calls; the one that threw did not complete.
      expect(verify?.points.reduce((sum, point) => sum + (point.count ?? 0), 0)).toBe(4);
      expect(metrics.map((metric) => metric.name)).toContain(INSTRUMENTS.operationDuration.name);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it('NEMO_GYM_OTEL_EXPORTER=prometheus: a real scrape shows the verifies; the default port is 9464', async () => {
    const { report, code, stderr } = await runExample({
      NEMO_GYM_OTEL_ENABLED: '1',
      NEMO_GYM_OTEL_EXPORTER: 'prometheus',
      // Port 0 here only so that parallel test runs cannot clash; the default is asserted below.
      OTEL_EXPORTER_PROMETHEUS_PORT: '0',
    });
    expect(report.results).toEqual(EXPECTED_RESULTS);
    expect(verifyCount(report.scraped)).toBe(4);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const defaults = await runExample({ NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'none' });
    expect(defaults.report.handle?.prometheusPort).toBe(9464);
  }, 60_000);

  it('your own SDK set up first, Gym telemetry on: the verifies land in your SDK, with one warning', async () => {
    const { report, code, stderr } = await runExample({ NEMO_GYM_OTEL_ENABLED: '1' }, true);
    expect(report.results).toEqual(EXPECTED_RESULTS);
    expect(report.handle).toMatchObject({ metricsExporting: true, gymResourceApplied: false });
    expect(report.userMetricNames).toEqual(
      expect.arrayContaining([INSTRUMENTS.verifyDuration.name, INSTRUMENTS.operationDuration.name]),
    );
    expect(code).toBe(0);
    expect(warnings(stderr)).toEqual([
      expect.stringContaining(
        'not applied there: the Gym resource attributes (service.name "nemo-gym/math_verifier", nemo.run.id, nemo.gym.*)',
      ),
    ]);
  }, 60_000);

  it('your own SDK set up first, Gym telemetry off: nothing is recorded into it, and one warning says so', async () => {
    const { report, code, stderr } = await runExample({}, true);
    expect(report.results).toEqual(EXPECTED_RESULTS);
    expect(report.userMetricNames).toEqual([]);
    expect(code).toBe(0);
    expect(warnings(stderr)).toEqual([
      expect.stringContaining('NEMO_GYM_OTEL_ENABLED is off, so the Gym libraries record nothing'),
    ]);
  }, 60_000);
});
