// docs/telemetry.md is the project's telemetry contract in words. This test ties it to the
// code so that it cannot drift: every instrument name, attribute key, allowed value, boundary
// list, span name and environment variable the packages define appears there, the units and
// kinds it states are the ones the packages really create their instruments with (read back
// from a real SDK), and the failure policy is the sentence every README states.

import { readFileSync } from 'node:fs';
import * as constants from '@gym/constants';
import { FAILURE_POLICY, GYM_VARIABLES } from '@gym/core';
import { SERIES } from '@gym/dashboards';
import { recordRolloutDuration, recordVerify } from '@gym/metrics';
import { startObserver } from '@gym/observer';
import { resourcesOperation } from '@gym/operations';
import * as sandbox from '@gym/sandbox-telemetry';
import { createMetricHarness } from '@gym/test-kit';
import { describe, expect, it } from '@jest/globals';
import { InstrumentType } from '@opentelemetry/sdk-metrics';
import { OTEL_VARIABLES, OTLP_VARIABLES } from '../packages/otel-bootstrap/src/otel-variables.js';

const doc = readFileSync(new URL('../docs/telemetry.md', import.meta.url), 'utf8');

/** The text between a heading line and the next heading of the same or a higher level. */
function section(heading: string): string {
  const start = doc.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/telemetry.md has no heading ${heading}`);
  const level = heading.indexOf(' ');
  const rest = doc.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`\\n#{1,${level}} `));
  return next < 0 ? rest : rest.slice(0, next);
}

/** Table rows of `text` as trimmed cells, header and separator rows left out. */
function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    )
    .filter((cells, index, all) => index > 0 || all.length === 1 || !/^[A-Z]/.test(cells[0] ?? ''))
    .filter((cells) => cells[0]?.startsWith('`'));
}

/** The backticked words of a cell, in order. */
const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);

/** `ms` from "`ms`", '' from "—". */
const unitOf = (cell: string) => (cell === '—' ? '' : (ticked(cell)[0] ?? `<bad unit cell ${cell}>`));

const instrumentRows = new Map(
  rows(section('## Metrics')).map((cells) => [
    ticked(cells[0] as string)[0] as string,
    { kind: cells[1] as string, unit: unitOf(cells[2] as string), attributes: ticked(cells[3] ?? '') },
  ]),
);

const exported = (module: Record<string, unknown>, pattern: RegExp) =>
  Object.entries(module).filter(([name]) => pattern.test(name)) as [string, unknown][];

const metricNames = exported(constants, /^METRIC_/).map(([, value]) => value as string);

describe('instruments', () => {
  it('the tables list every instrument the constants name, and nothing else', () => {
    expect(metricNames.length).toBeGreaterThan(20);
    // The one declared-and-never-recorded name is explained in prose instead of a table row.
    const recorded = metricNames.filter((name) => name !== constants.METRIC_SERVER_REQUEST_DURATION);
    expect([...instrumentRows.keys()].sort()).toEqual([...recorded].sort());
    expect(doc).toContain(
      `\`${constants.METRIC_SERVER_REQUEST_DURATION}\` is declared and deliberately never recorded`,
    );
  });

  it('units and kinds match the dashboards series table (one unit per instrument in the repository)', () => {
    const coarse: Record<string, string[]> = {
      histogram: ['histogram'],
      gauge: ['gauge', 'observable gauge', 'up-down counter', 'observable up-down counter'],
      counter: ['counter', 'observable counter'],
    };
    const series = Object.values(SERIES) as { otelName: string; kind: string; unit: string }[];
    expect(series.length).toBeGreaterThan(20);
    const mismatches = series.flatMap((s) => {
      const row = instrumentRows.get(s.otelName);
      if (row === undefined) return [`${s.otelName}: not in the doc`];
      const problems: string[] = [];
      if (row.unit !== s.unit) problems.push(`${s.otelName}: doc unit '${row.unit}', dashboards '${s.unit}'`);
      if (!(coarse[s.kind] ?? []).includes(row.kind))
        problems.push(`${s.otelName}: doc kind ${row.kind}, dashboards ${s.kind}`);
      return problems;
    });
    expect(mismatches).toEqual([]);
  });

  it('units and kinds are what @gym/operations, @gym/metrics and @gym/observer really create (read back from the SDK)', async () => {
    const harness = createMetricHarness();
    const { meterProvider } = harness;
    await resourcesOperation(null, { operation: 'verify', executor: 'inline', meterProvider }, async () => 1);
    recordRolloutDuration(10, { meterProvider });
    recordVerify(10, true, { meterProvider });
    const observer = startObserver({ meterProvider, serverName: 'doc_test' });
    const collected = await harness.collect();
    observer.stop();
    // The SDK's descriptors carry the instrument type at runtime (not in the 2.x typings).
    const kindWords: Record<string, string> = {
      [InstrumentType.HISTOGRAM]: 'histogram',
      [InstrumentType.GAUGE]: 'gauge',
      [InstrumentType.COUNTER]: 'counter',
      [InstrumentType.UP_DOWN_COUNTER]: 'up-down counter',
      [InstrumentType.OBSERVABLE_GAUGE]: 'observable gauge',
      [InstrumentType.OBSERVABLE_COUNTER]: 'observable counter',
      [InstrumentType.OBSERVABLE_UP_DOWN_COUNTER]: 'observable up-down counter',
    };
    const read = [...collected.values()].map((metric) => ({
      name: metric.descriptor.name,
      kind: kindWords[(metric.descriptor as { type?: string }).type ?? ''],
      unit: metric.descriptor.unit,
    }));
    // Non-vacuous: the four operation instruments, three of @gym/metrics and the observer's
    // always-present series were exported (lag and GC need time to pass; the dashboards
    // comparison above covers their units).
    expect(read.map((m) => m.name)).toEqual(
      expect.arrayContaining([
        constants.METRIC_PROCESS_CPU_TIME,
        constants.METRIC_PROCESS_MEMORY_USAGE,
        constants.METRIC_REQUESTS_IN_FLIGHT,
      ]),
    );
    expect(
      read
        .map((m) => m.name)
        .filter((name) => !/^(process|v8js)\.|^gym\.(event_loop|server)\./.test(name))
        .sort(),
    ).toEqual(
      [
        constants.METRIC_OPERATION_ACTIVE,
        constants.METRIC_OPERATION_DURATION,
        constants.METRIC_OPERATION_QUEUE_DURATION,
        constants.METRIC_OPERATION_QUEUED,
        constants.METRIC_ROLLOUT_DURATION,
        constants.METRIC_VERIFY_DURATION,
        constants.METRIC_VERIFY_SUCCESS_RATE,
      ].sort(),
    );
    const documented = read.map((m) => ({
      name: m.name,
      kind: instrumentRows.get(m.name)?.kind,
      unit: instrumentRows.get(m.name)?.unit,
    }));
    expect(documented).toEqual(read);
    await harness.shutdown();
  });

  it('every UNIT_* constant is the unit of some documented instrument', () => {
    const units = new Set([...instrumentRows.values()].map((row) => row.unit));
    const units_ = exported(constants, /^UNIT_/);
    expect(units_.length).toBeGreaterThan(3);
    expect(units_.filter(([, unit]) => !units.has(unit as string)).map(([name]) => name)).toEqual([]);
  });

  it('every boundary list is stated exactly, and every histogram names a documented list', () => {
    const lists = exported(constants, /_BOUNDARIES_(MS|S)$/);
    expect(lists.length).toBeGreaterThanOrEqual(5);
    const table = new Map(
      rows(section('## Histogram bucket boundaries')).map((cells) => [ticked(cells[0] as string)[0], cells[1]]),
    );
    for (const [name, values] of lists)
      expect(`${name}: ${table.get(name)}`).toBe(`${name}: ${(values as number[]).join(', ')}`);
    const histogramBuckets = rows(section('## Metrics'))
      .filter((cells) => cells[1] === 'histogram')
      .map((cells) => ticked(cells[4] ?? '')[0]);
    expect(histogramBuckets.filter((name) => name === undefined || !table.has(name))).toEqual([]);
  });
});

describe('attributes', () => {
  const allowedRows = new Map(
    rows(section('## Metric attributes and their allowed values')).map((cells) => [
      ticked(cells[0] as string)[0] as string,
      cells[1] as string,
    ]),
  );

  it('every ATTR_* key of @gym/constants and @gym/sandbox-telemetry appears', () => {
    const keys = [...exported(constants, /^ATTR_/), ...exported(sandbox, /^ATTR_/)];
    expect(keys.length).toBeGreaterThan(20);
    expect(keys.filter(([, key]) => !doc.includes(`\`${key}\``)).map(([name, key]) => `${name} = ${key}`)).toEqual([]);
  });

  it.each([
    [constants.ATTR_OPERATION, constants.OPERATIONS],
    [constants.ATTR_EXECUTOR, constants.EXECUTORS],
    [constants.ATTR_OUTCOME, constants.OUTCOMES],
    [constants.ATTR_CONCURRENCY_COMPONENT, constants.COMPONENTS],
    [constants.ATTR_V8JS_GC_TYPE, constants.V8JS_GC_TYPES],
    [constants.ATTR_HTTP_POOL_QUEUE_CONSTRAINT, constants.HTTP_POOL_QUEUE_CONSTRAINTS],
    [constants.ATTR_HTTP_POOL_QUEUE_OUTCOME, constants.HTTP_POOL_QUEUE_OUTCOMES],
  ])('%s allows exactly the bounded set, in order', (key, values) => {
    expect(ticked(allowedRows.get(key) ?? '')).toEqual([...values]);
  });

  it.each([
    [constants.ATTR_CONCURRENCY_LIMIT_NAME, constants.LIMIT_NAME_PATTERN],
    [constants.ATTR_SANDBOX_PROVIDER, constants.SANDBOX_PROVIDER_PATTERN],
    [constants.ATTR_SERVER_NAME, constants.SERVER_NAME_PATTERN],
  ])('%s states the name pattern of the code', (key, pattern) => {
    expect(ticked(allowedRows.get(key) ?? '')).toEqual([pattern.source]);
  });

  it('the server types and the limit-name cap are stated', () => {
    const typeRow = rows(section('## Resource attributes')).find(
      (cells) => cells[0] === `\`${constants.ATTR_SERVER_TYPE}\``,
    );
    expect(ticked(typeRow?.[1] ?? '')).toEqual([...constants.SERVER_TYPES]);
    expect(doc).toContain(`At most ${constants.MAX_LIMIT_NAMES} limit`);
    const resourceKeys = rows(section('## Resource attributes')).map((cells) => ticked(cells[0] as string)[0]);
    expect(resourceKeys).toEqual([...constants.RESOURCE_ATTRIBUTE_KEYS]);
  });

  it('sandbox keys all start with the sandbox prefix', () => {
    const keys = rows(section('### Sandbox records (`@gym/sandbox-telemetry`)'))
      .flatMap((cells) => ticked(cells[0] as string))
      .filter((key) => !key.startsWith('.') && !key.startsWith('…'));
    expect(keys.length).toBeGreaterThan(15);
    expect(
      keys.filter((key) => !key.startsWith(constants.SANDBOX_ATTRIBUTE_PREFIX) && !key.startsWith('gym.sandbox.')),
    ).toEqual([]);
  });
});

describe('spans', () => {
  it('every SPAN_* name of @gym/sandbox-telemetry has a row', () => {
    const names = exported(sandbox, /^SPAN_/).map(([, name]) => name as string);
    expect(names.length).toBe(3);
    const table = rows(section('### Sandbox records (`@gym/sandbox-telemetry`)')).map(
      (cells) => ticked(cells[0] as string)[0],
    );
    expect(names.filter((name) => !table.includes(name))).toEqual([]);
  });

  it('span groups and presets are the code', () => {
    const groupsLine = section('### Span groups');
    for (const group of constants.SPAN_GROUPS) expect(groupsLine).toContain(`\`${group}\``);
    const presets = rows(groupsLine).map(
      (cells) => [ticked(cells[0] as string)[0], ticked(cells[1] as string)] as const,
    );
    expect(presets.map(([name]) => name)).toEqual(Object.keys(constants.SPAN_GROUP_PRESETS));
    for (const [name, groups] of presets) {
      if (name === 'all') expect([...constants.SPAN_GROUP_PRESETS.all]).toEqual([...constants.SPAN_GROUPS]);
      else expect(groups).toEqual([...constants.SPAN_GROUP_PRESETS[name as 'default' | 'per_rollout']]);
    }
  });
});

describe('environment variables', () => {
  const gymRows = rows(section("### Gym's own (read by `@gym/core`, shared by every package)"));
  const otelRows = rows(section('### Standard OpenTelemetry variables (read by `@gym/otel-bootstrap`)'));

  it("every row of core's GYM_VARIABLES, with its fallback, default and allowed values, and no other", () => {
    const expected = Object.values(GYM_VARIABLES).map((v) => [
      `\`${v.names[0]}\``,
      `\`${v.names[1]}\``,
      v.defaultText,
      v.allowed,
    ]);
    expect(expected.length).toBeGreaterThanOrEqual(10);
    expect(gymRows).toEqual(expected);
  });

  it("every standard variable of the bootstrap's table, with its default, allowed values and when it is read", () => {
    const expected = [...Object.values(OTEL_VARIABLES), ...Object.values(OTLP_VARIABLES)].map((v) => [
      `\`${v.names[0]}\``,
      v.defaultText,
      v.allowed,
      v.readWhen,
    ]);
    expect(expected.length).toBeGreaterThanOrEqual(10);
    expect(otelRows).toEqual(expected);
  });

  it('the truthy and falsy words are stated', () => {
    for (const word of [...constants.TRUTHY_WORDS, ...constants.FALSY_WORDS])
      expect(section('## Environment variables')).toContain(`\`${word}\``);
  });
});

it('states the failure policy word for word', () => {
  expect(doc).toContain(`> ${FAILURE_POLICY}`);
});
