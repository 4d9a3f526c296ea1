// The shipped rules through promtool itself: `promtool check rules` (syntax, PromQL,
// templates) and `promtool test rules` over test/promtool/*.test.yml, where every alert has
// series that fire and series that do not. Each test file is also run against a rule file with
// that alert's threshold loosened, which must FAIL: the non-firing series really do not fire
// only because of the threshold.

import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ALERT_NAMES, COLLECTOR_UNIT_SUFFIXES, generate } from '@gym/dashboards';
import { requireTools } from '@gym/test-kit';
import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import { parse } from 'yaml';
import { packageFile } from './support/paths.js';

// Child processes (node, tsc, promtool) on a loaded machine: a generous bound, not a speed claim.
jest.setTimeout(120_000);

const run = promisify(execFile);
const tools = requireTools('promtool');
const TESTS_DIR = packageFile('test/promtool');
const RULES = ['generated/prometheus/gym-recording.rules.yml', 'generated/prometheus/gym-alerts.rules.yml'];

async function promtool(args: readonly string[], cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(tools.path('promtool'), [...args], { cwd });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, output: `${failed.stdout}${failed.stderr}` };
  }
}

interface PromtoolTestFile {
  tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
}

let testFiles: string[] = [];

beforeAll(async () => {
  testFiles = (await readdir(TESTS_DIR)).filter((file) => file.endsWith('.test.yml')).sort();
});

tools.describe('promtool', () => {
  it('check rules passes on the shipped rules', async () => {
    const result = await promtool(['check', 'rules', ...RULES], packageFile('.'));
    expect(result.output).toContain('SUCCESS: 5 rules found');
    expect(result.code).toBe(0);
  });

  it('check rules passes on rules generated for a pipeline with unit suffixes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gym-dashboards-suffixed-'));
    try {
      const files = generate({ nameSuffixes: COLLECTOR_UNIT_SUFFIXES });
      const paths = ['prometheus/gym-recording.rules.yml', 'prometheus/gym-alerts.rules.yml'] as const;
      for (const path of paths) await writeFile(join(dir, path.replace('prometheus/', '')), files[path]);
      const result = await promtool(['check', 'rules', 'gym-recording.rules.yml', 'gym-alerts.rules.yml'], dir);
      expect(result.code).toBe(0);
      expect(files['prometheus/gym-alerts.rules.yml']).toContain('gym_verify_success_rate_ratio');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('test rules passes on every test file', async () => {
    expect(testFiles.length).toBeGreaterThanOrEqual(ALERT_NAMES.length);
    const result = await promtool(['test', 'rules', ...testFiles], TESTS_DIR);
    expect(result.output).not.toContain('FAILED');
    expect(result.code).toBe(0);
  });

  it('exercises every alert with a case that fires and a case that does not', async () => {
    const firing = new Set<string>();
    const silent = new Set<string>();
    for (const file of testFiles) {
      const parsed = parse(await readFile(join(TESTS_DIR, file), 'utf8')) as PromtoolTestFile;
      for (const test of parsed.tests) {
        for (const check of test.alert_rule_test ?? []) {
          (check.exp_alerts.length > 0 ? firing : silent).add(check.alertname);
        }
      }
    }
    expect([...firing].sort()).toEqual([...ALERT_NAMES].sort());
    expect([...silent].sort()).toEqual([...ALERT_NAMES].sort());
  });
});

tools.describe('the promtool tests can fail', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'gym-dashboards-promtool-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  // Per alert, changes of its expression that each make a series the test expects NOT to fire fire.
  const loosened: [alert: (typeof ALERT_NAMES)[number], from: string, to: string][] = [
    ['GymConcurrencyLimitSaturated', '(gym_concurrency_queue_depth) > 0)', '(gym_concurrency_queue_depth) >= 0)'],
    ['GymConcurrencyLimitSaturated', 'saturation_ratio >= 1)', 'saturation_ratio >= 0.4)'],
    ['GymOperationsFailing', 'failure_ratio_rate5m > 0.05', 'failure_ratio_rate5m > 0.005'],
    ['GymVerifySuccessDropping', '(gym_verify_success_rate) < 0.9', '(gym_verify_success_rate) < 0.995'],
    ['GymVerifySuccessDropping', '<= -0.05', '<= -0.01'],
    ['GymFleetShrank', '(gym_servers_active) < max', '(gym_servers_active) <= max'],
    ['GymEventLoopLagHigh', 'p99_rate5m > 100', 'p99_rate5m > 0.5'],
  ];

  it('loosens every alert at least once', () => {
    expect([...new Set(loosened.map(([alert]) => alert))].sort()).toEqual([...ALERT_NAMES].sort());
  });

  it.each(loosened)('%s: the test file fails when %s becomes %s', async (alert, from, to) => {
    const dir = await mkdtemp(join(work, `${alert}-`));
    await mkdir(join(dir, 'generated'), { recursive: true });
    await cp(packageFile('generated/prometheus'), join(dir, 'generated/prometheus'), { recursive: true });
    await cp(TESTS_DIR, join(dir, 'test/promtool'), { recursive: true });
    const alertsFile = join(dir, 'generated/prometheus/gym-alerts.rules.yml');
    const original = await readFile(alertsFile, 'utf8');
    expect(original.split(from)).toHaveLength(2);
    await writeFile(alertsFile, original.replace(from, to));
    const files = [];
    for (const file of testFiles) {
      if ((await readFile(join(TESTS_DIR, file), 'utf8')).includes(`alertname: ${alert}`)) files.push(file);
    }
    expect(files.length).toBeGreaterThan(0);
    const result = await promtool(['test', 'rules', ...files], join(dir, 'test/promtool'));
    expect(result.output).toContain('FAILED');
    expect(result.code).not.toBe(0);
  });

  it('fails when an alert never fires', async () => {
    const dir = join(work, 'never');
    await mkdir(join(dir, 'generated'), { recursive: true });
    await cp(packageFile('generated/prometheus'), join(dir, 'generated/prometheus'), { recursive: true });
    await cp(TESTS_DIR, join(dir, 'test/promtool'), { recursive: true });
    const alertsFile = join(dir, 'generated/prometheus/gym-alerts.rules.yml');
    const silenced = (await readFile(alertsFile, 'utf8')).replace(/^(\s+)expr: .*$/gm, '$1expr: vector(1) < 0');
    await writeFile(alertsFile, silenced);
    const result = await promtool(['test', 'rules', ...testFiles], join(dir, 'test/promtool'));
    expect(result.output.match(/FAILED/g)).toHaveLength(testFiles.length);
  });
});
