// `@gym/dashboards/internal`'s scaled rules (for live tests): at scale 1 they are the shipped
// files byte for byte; scaled, every range window, the memory and every `for:` change by the
// same factor (and the fewest calls a share needs stays that many calls per window), nothing
// else does, and promtool accepts them.

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generate } from '@gym/dashboards';
import { rulesYaml } from '@gym/dashboards/internal';
import { requireTools } from '@gym/test-kit';
import { describe, expect, it, jest } from '@jest/globals';
import { parse } from 'yaml';
import { COLLECTOR_UNIT_SUFFIXES } from '../src/prometheus-names.js';
import { MIN_CALLS_PER_WINDOW } from '../src/recording-rules.js';
import { scaled } from '../src/series.js';
import { packageFile } from './support/paths.js';

// promtool as a child process on a loaded machine: a generous bound, not a speed claim.
jest.setTimeout(120_000);

const RULE_PATHS = ['prometheus/gym-recording.rules.yml', 'prometheus/gym-alerts.rules.yml'] as const;
const tools = requireTools('promtool');

interface Rules {
  groups: { rules: { record?: string; alert?: string; expr: string; for?: string; annotations?: unknown }[] }[];
}
const rulesOf = (text: string): Rules['groups'][number]['rules'] =>
  (parse(text) as Rules).groups.flatMap((g) => g.rules);
const ranges = (expr: string): string[] => [...expr.matchAll(/\[(\w+)\]/g)].map((match) => match[1] as string);
const CALLS_PER_WINDOW = new RegExp(`>= \\(${MIN_CALLS_PER_WINDOW} / (\\d+)\\)`, 'g');
const perWindow = (expr: string): number[] => [...expr.matchAll(CALLS_PER_WINDOW)].map((match) => Number(match[1]));
const same = (expr: string): string => expr.replace(/\[\w+\]/g, '[]').replace(CALLS_PER_WINDOW, '>= (calls / window)');

describe('rulesYaml', () => {
  it('at scale 1 is byte-identical to the checked-in files and to generate(), with or without suffixes', async () => {
    const same = rulesYaml({ timeScale: 1 });
    for (const path of RULE_PATHS) {
      expect(same[path]).toBe(await readFile(packageFile(`generated/${path}`), 'utf8'));
      expect(same[path]).toBe(generate()[path]);
    }
    const suffixes = { nameSuffixes: [{ unit: 'ms', suffix: 'msec' }] };
    const suffixed = rulesYaml({ ...suffixes, timeScale: 1 });
    for (const path of RULE_PATHS) expect(suffixed[path]).toBe(generate(suffixes)[path]);
  });

  it('scales every range window, the memory and every for: by one factor, and nothing else', () => {
    const scale = 1 / 15;
    for (const path of RULE_PATHS) {
      const shipped = rulesOf(generate()[path]);
      const fast = rulesOf(rulesYaml({ timeScale: scale })[path]);
      expect(fast).toHaveLength(shipped.length);
      shipped.forEach((rule, index) => {
        const short = fast[index];
        expect(short?.record).toBe(rule.record);
        expect(short?.alert).toBe(rule.alert);
        expect(short?.annotations).toEqual(rule.annotations);
        expect(short?.for).toBe(rule.for === undefined ? undefined : scaled(rule.for, scale));
        expect(ranges(short?.expr ?? '')).toEqual(ranges(rule.expr).map((range) => scaled(range, scale)));
        // The fewest calls a share needs stays a count of calls per window, whatever the window.
        expect(perWindow(short?.expr ?? '')).toEqual(perWindow(rule.expr).map((seconds) => seconds * scale));
        // Apart from those, the same expression.
        expect(short !== undefined && same(short.expr)).toBe(same(rule.expr));
      });
    }
    const alerts = rulesYaml({ timeScale: scale })['prometheus/gym-alerts.rules.yml'];
    // Proportions kept: a 5-minute window with a 10-minute for: becomes 20 s with 40 s; the hour, 4 minutes.
    expect(alerts).toContain('[20s]');
    expect(alerts).toContain('for: 40s');
    expect(alerts).toContain('[4m]');
    expect(alerts).not.toMatch(/\[5m\]|\[1h\]|for: \d+m/);
  });

  it('scaled writes each duration in the largest unit that divides it', () => {
    expect(scaled('5m', 1)).toBe('5m');
    expect(scaled('1h', 1)).toBe('1h');
    expect(scaled('1h', 1 / 15)).toBe('4m');
    expect(scaled('5m', 1 / 15)).toBe('20s');
    expect(scaled('1m', 1 / 15)).toBe('4s');
    expect(scaled('5m', 1 / 7)).toBe('42857ms');
    expect(scaled('5m', 24)).toBe('2h');
    expect(() => scaled('5m', 0)).toThrow(RangeError);
    expect(() => scaled('5 minutes', 1)).toThrow(RangeError);
  });
});

tools.describe('rulesYaml under promtool', () => {
  it('check rules passes on rules scaled to 1/15, with the Collector naming too', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gym-dashboards-scaled-'));
    try {
      const files = rulesYaml({ nameSuffixes: COLLECTOR_UNIT_SUFFIXES, timeScale: 1 / 15 });
      for (const path of RULE_PATHS) await writeFile(join(dir, path.replace('prometheus/', '')), files[path]);
      const { stdout } = await promisify(execFile)(
        tools.path('promtool'),
        ['check', 'rules', 'gym-recording.rules.yml', 'gym-alerts.rules.yml'],
        { cwd: dir },
      );
      expect(stdout).toContain('SUCCESS');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
