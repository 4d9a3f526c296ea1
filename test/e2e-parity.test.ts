// Parity with Gym itself: NeMo Gym 0.7.0's own example resources server (tools/gym-oracle,
// a cached Python environment built by tools/gym-oracle/install.sh) and our demo server
// (apps/demo) do the same bounded work side by side (a tool call, a limited verify, one sandbox
// with one exec; ours also uploads one file, as Gym's sandbox start does for a spec's files), each exporting OTLP/HTTP protobuf to its own receiver here. What they export
// is compared family by family: metric names, kinds, units, attribute keys and values, bucket
// boundaries; span names and attribute keys; resource attribute keys. Every difference must have
// its reason in the last column of the table in docs/telemetry.md, or the test fails naming it. The table in docs/telemetry.md
// ("Parity with Gym") is written by this test between its markers (`npm run e2e:parity`); under
// CI=true the test checks it instead and fails when it is stale.
//
// Without the oracle installed the suite is skipped, saying so; GYM_REQUIRE_ORACLE=1 (CI's parity
// step) turns that skip into a failure. `npm run e2e:parity` runs this file alone.

import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  decodeOtlpMetrics,
  decodeOtlpTraces,
  type OtlpMetric,
  type OtlpResourceBlock,
  type OtlpSpan,
  type OtlpValue,
} from '@gym/test-kit';
import { afterAll, describe, expect, it } from '@jest/globals';
import { type Captured, startServer, terminate, waitFor } from '../apps/demo/test/support/processes.js';
import { type OtlpReceiver, startOtlpReceiver } from '../packages/otel-bootstrap/test/helpers/otlp-receiver.js';

const ROOT = join(import.meta.dirname, '..');
const DOC = join(ROOT, 'docs/telemetry.md');
const START = '<!-- parity-table:start (written by test/e2e-parity.test.ts: npm run e2e:parity) -->';
const END = '<!-- parity-table:end -->';
/** The name both servers run under (Gym's example server's own name). */
const SERVER_NAME = 'example_single_tool_call';

/**
 * Why each known difference stays, read from the last column of the table in docs/telemetry.md
 * (`<aspect>: <reason>`, one per line of a cell): a new difference gets its reason written there,
 * beside its family. A difference without a reason fails the test; a reason no difference uses
 * fails it too.
 */
function reasonsInDoc(doc: string): Record<string, string> {
  const reasons: Record<string, string> = {};
  for (const line of doc.slice(doc.indexOf(START), doc.indexOf(END)).split('\n')) {
    const cells = line
      .replace(/\|\s*$/, '')
      .split(' | ')
      .map((cell) => cell.trim());
    const family = /^\| `(.+)`$/.exec(cells[0] ?? '')?.[1];
    if (family === undefined || cells.length !== 4) continue;
    for (const entry of (cells[3] ?? '').split('<br>')) {
      const colon = entry.indexOf(': ');
      if (colon > 0 && entry.slice(colon + 2) !== 'UNEXPLAINED')
        reasons[`${family} · ${entry.slice(0, colon)}`] = entry.slice(colon + 2);
    }
  }
  return reasons;
}

/** Families whose presence depends on the run, left out of the comparison, with why. */
const SPORADIC: Record<string, string> = {
  'v8js.gc.duration': 'exported only when a garbage collection ran during the test',
  'host.gpu.count': "nemo-lens's detection sets it only where GPUs are visible",
};

/** The document as the repository's formatter (Biome, `npm run lint`) lays it out. */
function formatted(markdown: string): string {
  const biome = join(ROOT, 'node_modules/.bin/biome');
  const run = spawnSync(biome, ['format', '--stdin-file-path=docs/telemetry.md'], {
    input: markdown,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`biome format failed: ${run.stderr}`);
  return run.stdout;
}

function oracleEnvironment(): string | undefined {
  const run = spawnSync('bash', [join(ROOT, 'tools/gym-oracle/install.sh'), '--print'], { encoding: 'utf8' });
  return run.status === 0 ? run.stdout.trim() : undefined;
}

const venv = oracleEnvironment();
const required = process.env.GYM_REQUIRE_ORACLE === '1';
const NOT_INSTALLED = 'the Gym 0.7.0 oracle is not installed (bash tools/gym-oracle/install.sh)';

interface Exported {
  metrics: OtlpResourceBlock<OtlpMetric>[];
  spans: OtlpResourceBlock<OtlpSpan>[];
}

function decode(receiver: OtlpReceiver): Exported {
  const metrics: OtlpResourceBlock<OtlpMetric>[] = [];
  const spans: OtlpResourceBlock<OtlpSpan>[] = [];
  for (const request of receiver.requests) {
    if (request.path === '/v1/metrics') metrics.push(...decodeOtlpMetrics(request.body));
    if (request.path === '/v1/traces') spans.push(...decodeOtlpTraces(request.body));
  }
  return { metrics, spans };
}

/** One family as one side exports it: every fact the table compares, as sorted strings. */
interface Family {
  kind: string;
  unit?: string;
  attributes: Map<string, Set<string>>;
  buckets?: string;
}

const show = (value: OtlpValue): string => (typeof value === 'string' ? value : JSON.stringify(value));

function metricKind(metric: OtlpMetric): string {
  if (metric.kind === 'sum') return metric.monotonic ? 'counter' : 'up-down counter';
  return metric.kind;
}

function* itemsOf<T>(blocks: readonly OtlpResourceBlock<T>[]): Generator<T> {
  for (const block of blocks) for (const scope of block.scopes) yield* scope.items;
}

/** Metric families, by name. */
function metricFamilies(exported: Exported): Map<string, Family> {
  const families = new Map<string, Family>();
  for (const metric of itemsOf(exported.metrics)) {
    if (SPORADIC[metric.name] !== undefined) continue;
    const family: Family = families.get(metric.name) ?? {
      kind: metricKind(metric),
      unit: metric.unit === '' ? '—' : metric.unit,
      attributes: new Map(),
    };
    for (const point of metric.points) {
      for (const [key, value] of Object.entries(point.attributes)) {
        const values = family.attributes.get(key) ?? new Set<string>();
        // Gym's own attributes are bounded sets: their values are compared. Others (HTTP
        // instrumentation's host and port, the GC type a run happened to see) only by key.
        if (key.startsWith('nemo.')) values.add(show(value));
        family.attributes.set(key, values);
      }
      if (point.explicitBounds !== undefined) family.buckets = point.explicitBounds.join(', ');
    }
    families.set(metric.name, family);
  }
  return families;
}

/** Span families, by name; attribute values are not compared (ids), only their keys. */
function spanFamilies(exported: Exported): Map<string, Family> {
  const families = new Map<string, Family>();
  for (const span of itemsOf(exported.spans)) {
    // The harness's own routes (POST /oracle/sandbox, /oracle/flush) are not Gym's.
    if (span.name.includes('/oracle/')) continue;
    const family: Family = families.get(span.name) ?? { kind: 'span', attributes: new Map() };
    for (const key of Object.keys(span.attributes)) family.attributes.set(key, new Set());
    families.set(span.name, family);
  }
  return families;
}

function resourceKeys(exported: Exported): Set<string> {
  const keys = new Set<string>();
  for (const block of [...exported.metrics, ...exported.spans])
    for (const key of Object.keys(block.resource)) if (SPORADIC[key] === undefined) keys.add(key);
  return keys;
}

interface Row {
  family: string;
  gym: string;
  ours: string;
  differences: string[];
}

const sorted = (values: Iterable<string>): string[] => [...values].sort();
const code = (values: Iterable<string>): string =>
  sorted(values)
    .map((value) => `\`${value}\``)
    .join(', ') || 'none';

function describeFamily(family: Family | undefined, metric: boolean): string {
  if (family === undefined) return 'absent';
  if (!metric) return `attributes ${code(family.attributes.keys())}`;
  const attributes = sorted(family.attributes.keys())
    .map((key) => {
      const values = sorted(family.attributes.get(key) ?? []);
      return values.length === 0 ? `\`${key}\`` : `\`${key}\` (${values.join(', ')})`;
    })
    .join(', ');
  return [
    family.kind,
    `unit \`${family.unit}\``,
    `attributes ${attributes || 'none'}`,
    family.buckets === undefined ? '' : `buckets ${family.buckets}`,
  ]
    .filter((part) => part !== '')
    .join('; ');
}

function compare(name: string, gym: Family | undefined, ours: Family | undefined, metric: boolean): Row {
  const differences: string[] = [];
  if (gym === undefined) differences.push(`${name} · only ours`);
  else if (ours === undefined) differences.push(`${name} · only Gym`);
  else {
    if (gym.kind !== ours.kind) differences.push(`${name} · kind`);
    if (gym.unit !== ours.unit) differences.push(`${name} · unit`);
    if (code(gym.attributes.keys()) !== code(ours.attributes.keys())) differences.push(`${name} · attribute keys`);
    else if (metric)
      for (const key of gym.attributes.keys())
        if (code(gym.attributes.get(key) ?? []) !== code(ours.attributes.get(key) ?? []))
          differences.push(`${name} · values of ${key}`);
    if (gym.buckets !== ours.buckets) differences.push(`${name} · buckets`);
  }
  return { family: name, gym: describeFamily(gym, metric), ours: describeFamily(ours, metric), differences };
}

function table(rows: readonly Row[], reasons: Record<string, string>): string {
  const lines = ['| Family | Gym 0.7.0 | gym-telemetry | Difference and reason |', '| --- | --- | --- | --- |'];
  for (const row of rows) {
    const verdict =
      row.differences.length === 0
        ? 'same'
        : row.differences.map((key) => `${key.split(' · ')[1]}: ${reasons[key] ?? 'UNEXPLAINED'}`).join('<br>');
    lines.push(`| \`${row.family}\` | ${row.gym} | ${row.ours} | ${verdict} |`);
  }
  return lines.join('\n');
}

const children: Captured[] = [];
const receivers: OtlpReceiver[] = [];
afterAll(async () => {
  for (const child of children) await terminate(child.child);
  for (const receiver of receivers) await receiver.close();
});

async function post(url: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** Gym's example server: a tool call, a verify of a rollout that called the tool, one sandbox. */
async function driveGym(receiver: OtlpReceiver): Promise<Record<string, unknown>> {
  const child = spawn(join(venv as string, 'bin/python'), [join(ROOT, 'tools/gym-oracle/oracle_server.py')], {
    env: {
      ...process.env,
      GYM_ORACLE_SERVER_NAME: SERVER_NAME,
      NEMO_GYM_OTEL_ENABLED: '1',
      NEMO_GYM_OTEL_RUN_ID: 'parity',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const captured: Captured = { child, stdout: '', stderr: '' };
  children.push(captured);
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    captured.stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    captured.stderr += chunk;
  });
  const ready = await waitFor(
    'the oracle ready line',
    () => {
      if (child.exitCode !== null) throw new Error(`the oracle exited: ${captured.stderr}`);
      const line = captured.stdout.split('\n').find((candidate) => candidate.startsWith('{"type": "ready"'));
      return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown> & { url: string });
    },
    90_000,
    50,
  );
  await post(`${ready.url}/get_weather`, { city: 'Warsaw' });
  const verified = await post(`${ready.url}/verify`, {
    responses_create_params: { input: "What's the weather in Warsaw?" },
    response: {
      id: 'parity',
      created_at: 0,
      model: 'parity',
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
  });
  expect(verified.reward).toBe(1);
  expect(await post(`${ready.url}/oracle/sandbox`)).toEqual({ return_code: 0 });
  await post(`${ready.url}/oracle/flush`);
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  return ready;
}

/** Our demo server: the same work through its own routes. */
async function driveOurs(receiver: OtlpReceiver): Promise<void> {
  const server = await startServer(['--name', SERVER_NAME], {
    ...process.env,
    NEMO_GYM_OTEL_ENABLED: '1',
    NEMO_GYM_OTEL_EXPORTER: 'otlp',
    NEMO_GYM_OTEL_RUN_ID: 'parity',
    NEMO_GYM_OTEL_SPAN_GROUPS: 'all',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_METRIC_EXPORT_INTERVAL: '600000',
  });
  children.push(server.process);
  await post(`${server.url}/tool`, { tool: 'word_count', input: 'the weather in Warsaw' });
  await post(`${server.url}/verify`, { answer: 'cold', expected: 'cold', workMs: 0 });
  const sandbox = await post(`${server.url}/sandboxes`, { lifetimeMs: 10_000 });
  await post(`${server.url}/sandboxes/${sandbox.id}/file`, { name: 'task.txt', content: 'parity' });
  await post(`${server.url}/sandboxes/${sandbox.id}/exec`, { input: 'parity', rounds: 1 });
  const stopped = await fetch(`${server.url}/sandboxes/${sandbox.id}`, { method: 'DELETE' });
  expect(stopped.ok).toBe(true);
  await terminate(server.process.child);
}

const suite = venv !== undefined ? describe : required ? describe : describe.skip;
const title =
  venv !== undefined || required
    ? 'parity with NeMo Gym 0.7.0'
    : `parity with NeMo Gym 0.7.0 [skipped: ${NOT_INSTALLED}]`;

suite(title, () => {
  it('exports what Gym exports, family by family, or the docs say why not', async () => {
    if (venv === undefined) throw new Error(`${NOT_INSTALLED}; GYM_REQUIRE_ORACLE=1 turns this skip into a failure`);
    const gymReceiver = await startOtlpReceiver();
    const ourReceiver = await startOtlpReceiver();
    receivers.push(gymReceiver, ourReceiver);
    const [ready] = await Promise.all([driveGym(gymReceiver), driveOurs(ourReceiver)]);
    const gym = decode(gymReceiver);
    const ours = decode(ourReceiver);

    const rows: Row[] = [];
    const gymMetrics = metricFamilies(gym);
    const ourMetrics = metricFamilies(ours);
    for (const name of sorted(new Set([...gymMetrics.keys(), ...ourMetrics.keys()])))
      rows.push(compare(name, gymMetrics.get(name), ourMetrics.get(name), true));
    const gymSpans = spanFamilies(gym);
    const ourSpans = spanFamilies(ours);
    for (const name of sorted(new Set([...gymSpans.keys(), ...ourSpans.keys()])))
      rows.push(compare(`span ${name}`, gymSpans.get(name), ourSpans.get(name), false));
    const gymResource = resourceKeys(gym);
    const ourResource = resourceKeys(ours);
    for (const key of sorted(new Set([...gymResource, ...ourResource]))) {
      const family = `resource ${key}`;
      rows.push({
        family,
        gym: gymResource.has(key) ? 'set' : 'absent',
        ours: ourResource.has(key) ? 'set' : 'absent',
        differences: gymResource.has(key) === ourResource.has(key) ? [] : [`${family} · presence`],
      });
    }

    const differences = rows.flatMap((row) => row.differences);
    const summary =
      `Gym ${ready.gym} on Python ${ready.python} (telemetry: ${ready.telemetry}); ` +
      `${rows.length} families compared, ${rows.filter((row) => row.differences.length === 0).length} the same, ` +
      `${differences.length} differences listed with their reason. Not compared, as their presence depends on the run: ` +
      Object.entries(SPORADIC)
        .map(([name, why]) => `\`${name}\` (${why})`)
        .join(', ') +
      '.';
    const doc = readFileSync(DOC, 'utf8');
    const reasons = reasonsInDoc(doc);
    const generated = `${START}\n\n${summary}\n\n${table(rows, reasons)}\n\n${END}`;
    const from = doc.indexOf(START);
    const to = doc.indexOf(END);
    expect(from).toBeGreaterThanOrEqual(0);
    const updated = formatted(`${doc.slice(0, from)}${generated}${doc.slice(to + END.length)}`);
    if (process.env.CI !== 'true' && updated !== doc) writeFileSync(DOC, updated);

    expect(differences.filter((key) => reasons[key] === undefined)).toEqual([]);
    expect(Object.keys(reasons).filter((key) => !differences.includes(key))).toEqual([]);
    // Outside CI the table was just rewritten; in CI a stale table fails (run npm run e2e:parity).
    if (process.env.CI === 'true') expect(updated).toBe(doc);
  }, 240_000);
});
