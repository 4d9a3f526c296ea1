// The files users copy are exactly what the generator writes (checked in under generated/,
// built into dist/generated/), the dashboard type-checks against the Grafana Foundation SDK's
// own types, every catalogued series is read somewhere, and every alert has its runbook.

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { INSTRUMENTS, type InstrumentId } from '@gym/constants';
import { GENERATED_PATHS, generate } from '@gym/dashboards';
import { describe, expect, it, jest } from '@jest/globals';
import { parse } from 'yaml';
import { alertRules } from '../src/alert-rules.js';
import { naming, prometheusNames } from '../src/prometheus-names.js';
import { keptByLens } from '../src/series.js';
import { type JsonPanel, panelQueries, readDashboard } from './support/dashboard-queries.js';
import { packageFile } from './support/paths.js';

// Child processes (node, tsc, promtool) on a loaded machine: a generous bound, not a speed claim.
jest.setTimeout(120_000);

const run = promisify(execFile);
const TSC = packageFile('../../node_modules/typescript/bin/tsc');

// The SDK types every string enum as a TypeScript enum, which a JSON literal cannot name; Loose
// turns each enum into the union of its values and leaves everything else as the SDK states it.
const LOOSE = `type Loose<T> = T extends string
  ? \`\${T}\`
  : T extends readonly (infer U)[]
    ? Loose<U>[]
    : T extends object
      ? { [K in keyof T]: Loose<T[K]> }
      : T;
`;
const TYPE_CHECK_HEADER = `import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import type * as prometheus from '@grafana/grafana-foundation-sdk/prometheus';
import type * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';

${LOOSE}type Target = Omit<Loose<prometheus.Dataquery>, '_implementsDataqueryVariant'>;
type FieldConfig = Omit<Loose<dashboard.FieldConfigSource>, 'defaults'> & {
  defaults: Omit<Loose<dashboard.FieldConfig>, 'custom'> & { custom?: Loose<timeseries.FieldConfig> };
};
type Panel = Omit<Loose<dashboard.Panel>, 'targets' | 'options' | 'fieldConfig' | 'type'> & {
  type: 'timeseries';
  targets: Target[];
  options: Loose<timeseries.Options>;
  fieldConfig: FieldConfig;
};
type Row = Omit<Loose<dashboard.RowPanel>, 'panels'> & { panels: Panel[] };
type Annotation = Omit<Loose<dashboard.AnnotationQuery>, 'target'> & { target: Target };
type Checked = Omit<Loose<dashboard.Dashboard>, 'panels' | 'annotations'> & {
  panels: (Panel | Row)[];
  annotations: { list: Annotation[] };
};
export const checked: Checked = `;

// Grafana's own schema types (@grafana/schema): what Grafana itself reads. Its Prometheus data
// source reads the legend formats of an annotation from the annotation itself, outside the schema.
const SCHEMA_CHECK_HEADER = `import type { AnnotationQuery, Dashboard, DataQuery } from '@grafana/schema';

${LOOSE}type PrometheusAnnotation = Omit<Loose<AnnotationQuery>, 'target'> & {
  target: Loose<DataQuery> & { expr: string; interval?: string };
  titleFormat?: string;
  textFormat?: string;
  tagKeys?: string;
};
type Checked = Omit<Loose<Dashboard>, 'annotations'> & { annotations: { list: PrometheusAnnotation[] } };
export const checked: Checked = `;

/** Type-checks a dashboard JSON text against the given types; resolves with tsc's output ('' when it passes). */
async function typeCheck(json: string, header = TYPE_CHECK_HEADER): Promise<string> {
  const dir = await mkdtemp(packageFile('.type-check-'));
  try {
    await writeFile(join(dir, 'check.ts'), `${header}${json.trim()};\n`);
    const flags = ['--ignoreConfig', '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext'];
    await run(process.execPath, [TSC, ...flags, '--moduleResolution', 'nodenext', '--types', 'node', 'check.ts'], {
      cwd: dir,
    });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the checked-in and built files', () => {
  it.each(GENERATED_PATHS)(
    'generated/%s is what the generator writes (run `npm run generate -w @gym/dashboards`)',
    async (path) => {
      expect(await readFile(packageFile(`generated/${path}`), 'utf8')).toBe(generate()[path]);
    },
  );

  it.each(GENERATED_PATHS)('dist/generated/%s, which the tarball ships, is what the generator writes', async (path) => {
    expect(await readFile(packageFile(`dist/generated/${path}`), 'utf8')).toBe(generate()[path]);
  });

  it('generates the same bytes twice', () => {
    expect(generate()).toEqual(generate());
  });
});

describe('the dashboard against the Grafana Foundation SDK types', () => {
  it('type-checks', async () => {
    expect(await typeCheck(generate()['grafana/gym-telemetry.json'])).toBe('');
  }, 120_000);

  it("type-checks against Grafana's schema (@grafana/schema)", async () => {
    expect(await typeCheck(generate()['grafana/gym-telemetry.json'], SCHEMA_CHECK_HEADER)).toBe('');
  }, 120_000);

  it('gives every panel and row a unique id and every query of a panel a unique refId', () => {
    const ids: number[] = [];
    const visit = (panels: { id?: number; targets?: { refId?: string }[]; panels?: unknown[] }[]): void => {
      for (const panel of panels) {
        ids.push(panel.id ?? 0);
        const refIds = (panel.targets ?? []).map((target) => target.refId);
        expect(refIds.every((refId) => typeof refId === 'string' && refId !== '')).toBe(true);
        expect(new Set(refIds).size).toBe(refIds.length);
        visit((panel.panels ?? []) as typeof panels);
      }
    };
    visit(readDashboard().panels as never);
    expect(ids.length).toBeGreaterThanOrEqual(30);
    expect(ids.every((id) => id > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  const SDK = TYPE_CHECK_HEADER;
  const SCHEMA = SCHEMA_CHECK_HEADER;
  it.each([
    [
      'a cursor-sync value outside the enum',
      SDK,
      (json: string) => json.replace('"graphTooltip": 1', '"graphTooltip": 7'),
    ],
    ['an unknown variable field', SDK, (json: string) => json.replace('"refresh": 2,', '"refresh": 2, "refreshh": 2,')],
    ['a misspelled query field', SDK, (json: string) => json.replace('"legendFormat"', '"legendFormatt"')],
    [
      'a legend mode outside the enum',
      SDK,
      (json: string) => json.replace('"displayMode": "table"', '"displayMode": "tabl"'),
    ],
    [
      "an interval field on a query variable (Grafana's schema)",
      SCHEMA,
      (json: string) => json.replace('"type": "query",', '"type": "query", "auto_min": "10s",'),
    ],
    [
      "a legacy top-level annotation expr (Grafana's schema)",
      SCHEMA,
      (json: string) => json.replace('"iconColor": "red",', '"iconColor": "red", "expr": "up",'),
    ],
  ])(
    'fails on %s (the check can fail)',
    async (_what, header, mutate) => {
      const json = generate()['grafana/gym-telemetry.json'];
      const mutated = mutate(json);
      expect(mutated).not.toBe(json);
      expect(await typeCheck(mutated, header)).toMatch(/error TS\d+/);
    },
    120_000,
  );
});

describe('what the dashboard and rules read', () => {
  const texts = () => {
    const files = generate();
    return [
      files['grafana/gym-telemetry.json'],
      files['prometheus/gym-recording.rules.yml'],
      files['prometheus/gym-alerts.rules.yml'],
    ].join('\n');
  };

  // The instruments no panel or rule reads, each with its reason.
  const NOT_READ: Partial<Record<InstrumentId, string>> = {
    sandboxTransferDuration: 'no panel shows sandbox uploads and downloads yet',
  };

  const read = (id: InstrumentId): RegExp => {
    const names = prometheusNames(INSTRUMENTS[id]);
    return new RegExp(`\\b(${names.series}|${names.sum}|${names.count})\\b`);
  };

  it.each(Object.keys(INSTRUMENTS).filter((id) => !(id in NOT_READ)))('reads %s', (id) => {
    expect(texts()).toMatch(read(id as InstrumentId));
  });

  it.each(Object.keys(NOT_READ))('does not read %s, so its NOT_READ entry still holds', (id) => {
    expect(texts()).not.toMatch(read(id as InstrumentId));
  });

  it('has the datasource, service, server and run id variables', () => {
    const variables = readDashboard().templating.list.map((variable) => `${variable.name}:${variable.type}`);
    expect(variables).toEqual(['datasource:datasource', 'job:query', 'server:query', 'run_id:query']);
  });

  it('filters every panel query by the selected targets', () => {
    const queries = panelQueries();
    expect(queries.length).toBeGreaterThan(20);
    for (const query of queries) expect(query.expr).toContain('target_info{job=~"$job"');
  });

  it("says, on every panel that reads a series NeMo Lens' metric filter drops, why it is empty there", () => {
    const dropped = Object.values(INSTRUMENTS)
      .map((instrument) => prometheusNames(instrument))
      .filter((names) => !keptByLens(names.base));
    expect(dropped.map((names) => names.base.split('_')[0]).sort()).toEqual(
      expect.arrayContaining(['process', 'v8js']),
    );
    const visit = (panels: JsonPanel[]): JsonPanel[] =>
      panels.flatMap((panel) => [panel, ...visit(panel.panels ?? [])]);
    const panels = visit(readDashboard().panels).filter((panel) => panel.targets !== undefined);
    let noted = 0;
    for (const panel of panels) {
      const reads = dropped.some((names) =>
        (panel.targets ?? []).some((target) =>
          new RegExp(`\\b(${names.base}|${names.series}|${names.sum}|${names.count})\\b`).test(target.expr),
        ),
      );
      expect({ panel: panel.title, says: (panel.description ?? '').includes('Empty under a metric filter') }).toEqual({
        panel: panel.title,
        says: reads,
      });
      if (reads) noted++;
    }
    expect(noted).toBeGreaterThanOrEqual(4);
  });

  it('gives every alert a summary, a description and a runbook section in the README', async () => {
    const readme = await readFile(packageFile('README.md'), 'utf8');
    const groups = parse(generate()['prometheus/gym-alerts.rules.yml']) as {
      groups: { rules: { alert: string; annotations: Record<string, string> }[] }[];
    };
    const alerts = groups.groups.flatMap((group) => group.rules);
    expect(alerts.map((alert) => alert.alert)).toEqual(alertRules(naming()).rules.map((rule) => rule.alert));
    for (const alert of alerts) {
      expect(alert.annotations.summary).toEqual(expect.any(String));
      expect(alert.annotations.description).toEqual(expect.any(String));
      expect(alert.annotations.runbook).toContain(alert.alert);
      expect(readme).toContain(`### Runbook: ${alert.alert}`);
    }
  });
});

describe('generate with unit suffixes', () => {
  it('reads the JS and Collector namings by default, and adds the given one', () => {
    const plain = generate()['prometheus/gym-recording.rules.yml'];
    expect(plain).toContain(
      '(rate(gym_resources_operation_queue_duration_ms_bucket[5m]) and present_over_time(gym_resources_operation_queue_duration_ms_bucket[50s])) or (rate(gym_resources_operation_queue_duration_ms_milliseconds_bucket[5m]) and present_over_time(gym_resources_operation_queue_duration_ms_milliseconds_bucket[50s]))',
    );
    const files = generate({ nameSuffixes: [{ unit: 'ms', suffix: 'msec' }] });
    const rules = files['prometheus/gym-recording.rules.yml'];
    expect(rules).toContain(
      '(rate(gym_resources_operation_queue_duration_ms_bucket[5m]) and present_over_time(gym_resources_operation_queue_duration_ms_bucket[50s])) or (rate(gym_resources_operation_queue_duration_ms_milliseconds_bucket[5m]) and present_over_time(gym_resources_operation_queue_duration_ms_milliseconds_bucket[50s])) or (rate(gym_resources_operation_queue_duration_ms_msec_bucket[5m]) and present_over_time(gym_resources_operation_queue_duration_ms_msec_bucket[50s]))',
    );
    expect(rules).toContain('record: instance:gym_resources_operation_queue_duration_ms_bucket:rate5m');
    // Every millisecond histogram reaches the dashboard through a recorded name, so its JSON does not change.
    expect(files['grafana/gym-telemetry.json']).toBe(generate()['grafana/gym-telemetry.json']);
  });

  it.each([
    ['an unknown unit', [{ unit: 'h', suffix: 'hours' }]],
    ['a bad suffix', [{ unit: 'ms', suffix: 'a b' }]],
  ])('refuses %s with a RangeError', (_what, nameSuffixes) => {
    expect(() => generate({ nameSuffixes })).toThrow(RangeError);
  });
});
