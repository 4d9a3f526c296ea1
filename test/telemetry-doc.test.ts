// docs/telemetry.md is the project's telemetry contract in words. This test ties it to the
// code so that it cannot drift: every instrument name, attribute key, allowed value, boundary
// list, span name and environment variable the packages define appears there, the units and
// kinds it states are the ones the packages really create their instruments with (read back
// from a real SDK), and the failure policy is the sentence every README states.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InstrumentEntry } from '@gym/constants';
import * as constants from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { createInstrument, FAILURE_POLICY, GYM_VARIABLES } from '@gym/core/internal';
import { startHttpPoolTelemetry } from '@gym/http-pool';
import { GymMetrics } from '@gym/metrics';
import { startObserver, startupTimeline } from '@gym/observer';
import { meteredLimit, resourcesOperation } from '@gym/operations';
import { SandboxLifecycle } from '@gym/sandbox-telemetry';
import { createMetricHarness } from '@gym/test-kit';
import { describe, expect, it } from '@jest/globals';
import { ValueType } from '@opentelemetry/api';
import { InstrumentType, type MetricData } from '@opentelemetry/sdk-metrics';
import { Pool } from 'undici';
import * as instrumentTable from '../packages/constants/src/instrument-table.js';
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

/** A Metrics table row, every column: kind, unit, attribute keys, and the bucket list it names (by its constant's name). */
interface DocumentedInstrument {
  readonly name: string;
  readonly kind: string;
  readonly unit: string;
  readonly attributes: string[];
  readonly buckets: string | undefined;
}

/** Every row of every table under "## Metrics" (a table without a Buckets column has none). */
const documentedRows: DocumentedInstrument[] = rows(section('## Metrics')).map((cells) => ({
  name: ticked(cells[0] as string)[0] as string,
  kind: cells[1] as string,
  unit: unitOf(cells[2] as string),
  attributes: ticked(cells[3] ?? ''),
  buckets: ticked(cells[4] ?? '')[0],
}));
const instrumentRows = new Map(documentedRows.map((row) => [row.name, row]));

const exported = (module: Record<string, unknown>, pattern: RegExp) =>
  Object.entries(module).filter(([name]) => pattern.test(name)) as [string, unknown][];

/** The one instrument table. Instruments of a new package join it and the doc's Metrics section together. */
const entries: InstrumentEntry[] = Object.values(constants.INSTRUMENTS);
const entryByName = new Map(entries.map((entry) => [entry.name, entry]));

/** The table's named bucket lists (`*_BOUNDARIES_*`), which the doc names; read through INSTRUMENTS. */
const boundaryLists = exported(instrumentTable, /_BOUNDARIES_(MS|S)$/);

/** The name of the `*_BOUNDARIES_*` list that is `boundaries` (the same array), or undefined. */
function boundaryListName(boundaries: readonly number[] | undefined): string | undefined {
  return boundaryLists.find(([, list]) => list === boundaries)?.[0];
}

/** What a reader exported, in the table's words: kind, unit, description, value type, buckets. */
function readBack(metric: MetricData) {
  const point = metric.dataPoints[0] as { value: unknown } | undefined;
  const value = point?.value as { buckets?: { boundaries: number[] } } | undefined;
  return {
    name: metric.descriptor.name,
    // The SDK's descriptors carry the instrument type at runtime (not in the 2.x typings).
    kind: KIND_WORDS[(metric.descriptor as { type?: string }).type ?? ''],
    unit: metric.descriptor.unit,
    description: metric.descriptor.description,
    valueType: metric.descriptor.valueType === ValueType.INT ? 'int' : 'double',
    boundaries: value?.buckets?.boundaries,
  };
}

/** The same facts, as the table states them. */
const stated = (entry: InstrumentEntry) => ({
  name: entry.name,
  kind: entry.kind,
  unit: entry.unit,
  description: entry.description,
  valueType: entry.valueType,
  boundaries: entry.boundaries === undefined ? undefined : [...entry.boundaries],
});

const KIND_WORDS: Record<string, string> = {
  [InstrumentType.HISTOGRAM]: 'histogram',
  [InstrumentType.GAUGE]: 'gauge',
  [InstrumentType.COUNTER]: 'counter',
  [InstrumentType.UP_DOWN_COUNTER]: 'up-down counter',
  [InstrumentType.OBSERVABLE_GAUGE]: 'observable gauge',
  [InstrumentType.OBSERVABLE_COUNTER]: 'observable counter',
  [InstrumentType.OBSERVABLE_UP_DOWN_COUNTER]: 'observable up-down counter',
};

describe('instruments', () => {
  it('the table holds every name once, but the one never recorded', () => {
    expect(entries.length).toBeGreaterThan(20);
    expect(entryByName.size).toBe(entries.length);
    expect(entries.every((entry) => Object.values(KIND_WORDS).includes(entry.kind))).toBe(true);
    // The one declared-and-never-recorded name is explained in prose instead of a table row.
    expect(entryByName.has('gym.server.request_duration_ms')).toBe(false);
    expect(doc).toContain('`gym.server.request_duration_ms` is declared and deliberately never recorded');
  });

  it('the Metrics tables list exactly the instruments of the table, once each', () => {
    expect(instrumentRows.size).toBe(documentedRows.length);
    expect([...instrumentRows.keys()].sort()).toEqual([...entryByName.keys()].sort());
  });

  it('every column of every row is the table: kind, unit, attributes in order, buckets', () => {
    const expected = entries.map((entry) => ({
      name: entry.name,
      kind: entry.kind,
      unit: entry.unit,
      attributes: [...entry.attributes],
      buckets: boundaryListName(entry.boundaries),
    }));
    // Every histogram's list is an exported constant, so the doc can name it.
    expect(expected.filter((row) => (row.kind === 'histogram') !== (row.buckets !== undefined))).toEqual([]);
    expect(entries.map((entry) => instrumentRows.get(entry.name))).toEqual(expected);
  });

  it('createInstrument makes every entry exactly as the table states it (read back from a real SDK)', async () => {
    const harness = createMetricHarness();
    const meter = harness.meterProvider.getMeter('telemetry-doc');
    for (const entry of entries) {
      const instrument = createInstrument(meter, entry);
      if ('record' in instrument) instrument.record(1);
      else if ('add' in instrument) instrument.add(1);
      else instrument.addCallback((result) => result.observe(1));
    }
    const read = [...(await harness.collect()).values()].map(readBack);
    expect(read.sort(byName)).toEqual(entries.map(stated).sort(byName));
    await harness.shutdown();
  });

  it('what the packages really create is the table: kind, unit, description, value type, buckets, attribute keys', async () => {
    const harness = createMetricHarness();
    const { meterProvider } = harness;
    const serverName = 'doc_test';
    await resourcesOperation(null, { operation: 'verify', executor: 'inline', meterProvider }, async () => 1);
    const gym = new GymMetrics({ meterProvider });
    gym.recordRolloutDuration(10);
    gym.recordVerify(10, true);
    const limit = meteredLimit(
      { acquire: async () => () => {} },
      {
        component: 'resources',
        limitName: 'doc_test',
        serverName,
        capacity: 2,
        admissionTimeoutMs: 60_000,
        meterProvider,
      },
    );
    await limit.run(() => 1);
    const observer = startObserver({ meterProvider, serverName });
    const timeline = startupTimeline({ serverName, meterProvider });
    timeline.mark('ready');
    timeline.report();
    // The lifecycle metrics follow the `sandbox` span group.
    setTelemetryState({
      metricsExporting: false,
      tracesExporting: false,
      spanGroups: ['sandbox'],
      orchestrator: false,
    });
    try {
      const sandbox = new SandboxLifecycle({ provider: 'docker', meterProvider });
      sandbox.create(() => {
        sandbox.retried();
        return 'sandbox';
      });
      sandbox.exec(() => 0);
      sandbox.transfer(() => 0);
    } finally {
      setTelemetryState(undefined);
    }
    // Hook: every other package that creates instruments records here too, with every optional
    // attribute given (its entries join INSTRUMENTS, its rows the doc's Metrics section; the
    // tests above then hold them to each other with no other change).
    // `@gym/http-pool`: of two requests sent at once through a pool of one connection, undici
    // queues the second in the pool while the first is pending, so both instruments export,
    // under a named destination.
    const server = createServer((_request, response) => response.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const pools = startHttpPoolTelemetry({ meterProvider, destinations: { [origin]: serverName } });
    const pool = pools.observe(new Pool(origin, { connections: 1 }), origin, { connections: 1 });
    let collected: MetricData[];
    try {
      await Promise.all([1, 2].map(async () => (await pool.request({ method: 'GET', path: '/' })).body.dump()));
      collected = [...(await harness.collect()).values()];
    } finally {
      pools.stop();
      await pool.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    observer.stop();
    await harness.shutdown();
    // Non-vacuous: every instrument but the lag and GC (they need time to pass), the fleet size
    // (one writer: the orchestrator) and the /proc gauges off Linux was exported. The
    // createInstrument test above covers those.
    const notHere = new Set<string>([
      constants.INSTRUMENTS.eventLoopLag.name,
      constants.INSTRUMENTS.gcDuration.name,
      constants.INSTRUMENTS.serversActive.name,
      ...(process.platform === 'linux'
        ? []
        : [constants.INSTRUMENTS.processThreadCount.name, constants.INSTRUMENTS.processOpenFds.name]),
    ]);
    const names = collected.map((metric) => metric.descriptor.name);
    expect(entries.map((entry) => entry.name).filter((name) => !notHere.has(name) && !names.includes(name))).toEqual(
      [],
    );
    const read = collected.map((metric) => ({
      ...readBack(metric),
      // Every optional attribute was given, so the points together carry every key of the entry.
      attributes: [...new Set(metric.dataPoints.flatMap((point) => Object.keys(point.attributes)))].sort(),
    }));
    const expected = read.map(({ name }) => {
      const entry = entryByName.get(name);
      return entry === undefined
        ? { name, notInTheTable: true }
        : { ...stated(entry), attributes: [...entry.attributes].sort() };
    });
    expect(read).toEqual(expected);
  });

  it('every boundary list is stated exactly', () => {
    const lists = boundaryLists;
    expect(lists.length).toBeGreaterThanOrEqual(5);
    const table = new Map(
      rows(section('## Histogram bucket boundaries')).map((cells) => [ticked(cells[0] as string)[0], cells[1]]),
    );
    expect([...table.keys()].sort()).toEqual(lists.map(([name]) => name).sort());
    for (const [name, values] of lists)
      expect(`${name}: ${table.get(name)}`).toBe(`${name}: ${(values as number[]).join(', ')}`);
  });
});

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);

describe('attributes', () => {
  const allowedRows = new Map(
    rows(section('## Metric attributes and their allowed values')).map((cells) => [
      ticked(cells[0] as string)[0] as string,
      cells[1] as string,
    ]),
  );

  it('every ATTR_* key of @gym/constants appears (a key prefix as the start of a key)', () => {
    const keys = exported(constants, /^ATTR_/);
    expect(keys.length).toBeGreaterThan(20);
    const missing = keys.filter(([name, key]) => !doc.includes(name.endsWith('_PREFIX') ? `\`${key}` : `\`${key}\``));
    expect(missing.map(([name, key]) => `${name} = ${key}`)).toEqual([]);
  });

  it.each(Object.entries(instrumentTable.ATTRIBUTE_VALUES))(
    '%s allows exactly the bounded set, in order',
    (key, values) => {
      expect(ticked(allowedRows.get(key) ?? '')).toEqual([...values]);
    },
  );

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
    expect(resourceKeys).toEqual([
      constants.ATTR_VERSION,
      constants.ATTR_SERVER_NAME,
      constants.ATTR_SERVER_TYPE,
      constants.ATTR_SERVICE_GROUP,
      constants.ATTR_RUN_ID,
    ]);
  });

  it('sandbox keys all start with the sandbox prefix', () => {
    const keys = rows(section('### Sandbox records (`@gym/sandbox-telemetry`)'))
      .flatMap((cells) => ticked(cells[0] as string))
      .filter((key) => !key.startsWith('.') && !key.startsWith('…'));
    expect(keys.length).toBeGreaterThan(15);
    expect(
      keys.filter((key) => !key.startsWith(constants.ATTR_SANDBOX_PREFIX) && !key.startsWith('gym.sandbox.')),
    ).toEqual([]);
  });
});

describe('spans', () => {
  it('every SPAN_SANDBOX_* name of @gym/constants has a row', () => {
    const names = exported(constants, /^SPAN_SANDBOX_/).map(([, name]) => name as string);
    expect(names.length).toBe(6);
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
