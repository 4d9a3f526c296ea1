// The shipped rules through promtool itself: `promtool check rules` (syntax, PromQL,
// templates) and `promtool test rules` over test/promtool/*.test.yml, where every alert fires
// on a fault, stays quiet on healthy series, resolves after recovery, and is not restarted by
// one odd scrape inside the fault. Each test file is also run against rules with one property
// taken away (a threshold loosened, a window made a single scrape, a series kept after its
// process died, liveness made a precondition again, a per-series product taken per instance,
// or a naming dropped), which must FAIL: each property is what the tests rely on.

import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generate } from '@gym/dashboards';
import { requireTools } from '@gym/test-kit';
import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import { parse } from 'yaml';
import { alertRules } from '../src/alert-rules.js';
import { COLLECTOR_UNIT_SUFFIXES, naming } from '../src/prometheus-names.js';
import { LIMIT_LABELS } from '../src/series.js';
import { packageFile } from './support/paths.js';

// Child processes (node, tsc, promtool) on a loaded machine: a generous bound, not a speed claim.
jest.setTimeout(120_000);

const run = promisify(execFile);
const ALERT_NAMES = alertRules(naming()).rules.map((rule) => rule.alert);
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
    expect(result.output).toContain(`SUCCESS: ${ALERT_NAMES.length} rules found`);
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
      // The Collector's naming is read by default: asking for it changes no rule.
      expect(files['prometheus/gym-recording.rules.yml']).toContain('gym_verify_success_rate_ratio');
      for (const path of paths) expect(parse(files[path])).toEqual(parse(generate()[path]));
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

  it('exercises every alert with a case that resolves: an alert expected firing is gone at a later time', async () => {
    const minutes = (time: string): number => {
      const match = /^(\d+)(m|h)$/.exec(time);
      if (match === null) throw new Error(`eval_time ${time} is not in m or h`);
      return Number(match[1]) * (match[2] === 'h' ? 60 : 1);
    };
    const resolving = new Set<string>();
    for (const file of testFiles) {
      const parsed = parse(await readFile(join(TESTS_DIR, file), 'utf8')) as PromtoolTestFile;
      for (const test of parsed.tests) {
        const checks = (test.alert_rule_test ?? []) as ResolvingCheck[];
        const key = (labels: Record<string, string>): string => JSON.stringify(Object.entries(labels).sort());
        for (const earlier of checks) {
          for (const later of checks) {
            if (later.alertname !== earlier.alertname || minutes(later.eval_time) <= minutes(earlier.eval_time))
              continue;
            const after = new Set(later.exp_alerts.map((alert) => key(alert.exp_labels)));
            if (earlier.exp_alerts.some((alert) => !after.has(key(alert.exp_labels)))) resolving.add(later.alertname);
          }
        }
      }
    }
    expect([...resolving].sort()).toEqual([...ALERT_NAMES].sort());
  });
});

interface ResolvingCheck {
  alertname: string;
  eval_time: string;
  exp_alerts: { exp_labels: Record<string, string> }[];
}

tools.describe('the promtool tests can fail', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'gym-dashboards-promtool-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  // The labels of one limit, as the alerts join on them.
  const L = LIMIT_LABELS.join(', ');
  // Per alert, changes of the rules that each make its test file fail: [alert, from, to, file].
  // A change of the recording rules replaces every occurrence.
  const loosened: [alert: string, from: string, to: string, file: 'alerts' | 'recording'][] = [
    ['GymConcurrencyLimitSaturated', 'saturation_ratio_avg5m >= 0.9)', 'saturation_ratio_avg5m >= 0.4)', 'alerts'],
    ['GymConcurrencyLimitSaturated', 'saturation_ratio_avg5m >= 0.9)', 'saturation_ratio >= 0.9)', 'alerts'],
    ['GymConcurrencyLimitSaturated', 'queue_depth:max5m > 0)', 'queue_depth:max5m >= 0)', 'alerts'],
    ['GymAdmissionRefusing', 'refused:ratio_rate5m > 0.01', 'refused:ratio_rate5m > 0.001', 'alerts'],
    ['GymOperationsFailing', 'failure_ratio_rate5m > 0.05', 'failure_ratio_rate5m > 0.005', 'alerts'],
    // A dead process's rate kept for the whole window: its alert lingers 5 minutes.
    ['GymOperationsFailing', ' and present_over_time(gym_resources_operation_duration_ms_count[50s])', '', 'recording'],
    // The minimum calls of a share dropped: a quiet server's noise fires.
    ['GymOperationsFailing', ' >= (100 / 300))', ')', 'recording'],
    ['GymAdmissionRefusing', ' >= (100 / 300))', ')', 'recording'],
    ['GymVerifySuccessDropping', 'ratio_rate5m < 0.9', 'ratio_rate5m < 0.995', 'alerts'],
    // The ratio kept after its process died (`rate(x) or x` is the rate alone).
    ['GymVerifySuccessDropping', '[5m]) and instance:gym_verify_', '[5m]) or instance:gym_verify_', 'recording'],
    // The highest success rate of an instance times everyone's calls: two servers under one
    // instance label cover for each other.
    [
      'GymVerifySuccessDropping',
      'without (otel_scope_name, otel_scope_version, otel_scope_schema_url)',
      'by (job, instance)',
      'recording',
    ],
    [
      'GymVerifySuccessDropping',
      '(last_over_time(gym_verify_success_rate[50s]) or last_over_time(gym_verify_success_rate_ratio[50s]))',
      'last_over_time(gym_verify_success_rate[50s])',
      'recording',
    ],
    ['GymTargetDown', 'avg_over_time(up[5m]) < 0.5', 'up == 0', 'alerts'],
    ['GymTargetDown', '< 0.5) and on (job, instance) up and', '< 0.5) and', 'alerts'],
    [
      'GymTargetDown',
      ' and on (job, instance) (max by (job, instance) (max_over_time(target_info[1h])) or max_over_time(instance:gym_series:count[1h]))',
      '',
      'alerts',
    ],
    // Gym targets known by target_info only: a filter that drops it hides them.
    ['GymTargetDown', ' or max_over_time(instance:gym_series:count[1h])', '', 'alerts'],
    [
      'GymTargetsAbsent',
      'max by (job) (max_over_time(instance:gym_target:up[1h])) unless on (job) max by (job) (instance:gym_target:up)',
      'max by (job, instance) (max_over_time(instance:gym_target:up[1h])) unless on (job, instance) instance:gym_target:up',
      'alerts',
    ],
    [
      'GymFleetShrank',
      'quantile_over_time(0.5, gym_servers_active[5m])',
      'last_over_time(gym_servers_active[5m])',
      'alerts',
    ],
    ['GymFleetShrank', ') < max by (job)', ') <= max by (job)', 'alerts'],
    [
      'GymFleetShrank',
      ' or (max by (job) (max_over_time(gym_servers_active[1h])) unless on (job) max by (job) (gym_servers_active))',
      '',
      'alerts',
    ],
    ['GymEventLoopLagHigh', 'p99_rate5m > 100', 'p99_rate5m > 0.5', 'alerts'],
    // Liveness as a precondition again (the old join to the targets that answer now), or a
    // series kept only while it answers now: a failed scrape restarts the wait.
    [
      'GymEventLoopLagHigh',
      '(rate(gym_event_loop_lag_ms_bucket[5m]) and',
      '(rate(gym_event_loop_lag_ms_bucket[5m]) and on (job, instance) instance:gym_target:up and',
      'recording',
    ],
    [
      'GymEventLoopLagHigh',
      'present_over_time(gym_event_loop_lag_ms_bucket[50s])',
      'gym_event_loop_lag_ms_bucket',
      'recording',
    ],
    [
      'GymConcurrencyLimitSaturated',
      'present_over_time(gym_concurrency_active[50s])',
      'gym_concurrency_active',
      'recording',
    ],
    // The threshold moves the firing time (an age grows a minute a minute): 5 minutes later misses it.
    ['GymQueueStuck', 'min5m > 60000)', 'min5m > 300000)', 'alerts'],
    ['GymQueueStuck', ` and on (${L}) (instance:gym_concurrency_oldest_wait_ms:drops5m == 0)`, '', 'alerts'],
    ['GymQueueStuck', ` and on (${L}) (instance:gym_concurrency_queue_depth:drops5m == 0)`, '', 'alerts'],
    [
      'GymQueueStuck',
      'min_over_time(gym_concurrency_oldest_wait_ms[5m])',
      'last_over_time(gym_concurrency_oldest_wait_ms[5m])',
      'recording',
    ],
    // The Collector's naming dropped: a Python server's stuck limit goes unseen.
    [
      'GymQueueStuck',
      '(min_over_time(gym_concurrency_oldest_wait_ms[5m]) and present_over_time(gym_concurrency_oldest_wait_ms[50s])) or (min_over_time(gym_concurrency_oldest_wait_ms_milliseconds[5m]) and present_over_time(gym_concurrency_oldest_wait_ms_milliseconds[50s]))',
      '(min_over_time(gym_concurrency_oldest_wait_ms[5m]) and present_over_time(gym_concurrency_oldest_wait_ms[50s]))',
      'recording',
    ],
    ['GymServerLostBehindCollector', ' unless on (job) up\n', '\n', 'alerts'],
    [
      'GymServerLostBehindCollector',
      'max_over_time(job:target_info:instances_min10m[1h])',
      'max_over_time(job:target_info:instances[1h])',
      'alerts',
    ],
    ['GymServerLostUnderFilter', ' unless on (job) max_over_time(job:target_info:instances[1h])', '', 'alerts'],
    [
      'GymServerLostUnderFilter',
      'quantile_over_time(0.5, job:gym_series:instances[5m])',
      'job:gym_series:instances',
      'alerts',
    ],
    ['GymTelemetryBlind', ' unless on (job) max_over_time(job:target_info:instances[5m])', '', 'alerts'],
    [
      'GymTelemetryBlind',
      'max_over_time(job:gym_series:instances[1h])',
      'max_over_time(job:gym_series:instances[5m])',
      'alerts',
    ],
    ['GymOutgoingCallsWaitForConnections', 'queued_ratio_rate5m > 0.1)', 'queued_ratio_rate5m > 0.01)', 'alerts'],
    ['GymOutgoingCallsWaitForConnections', 'p50_rate5m > 10)', 'p50_rate5m > 0.1)', 'alerts'],
    [
      'GymOutgoingCallsWaitForConnections',
      ' and on (job, instance, nemo_gym_http_destination_server_name) (',
      ' or (',
      'alerts',
    ],
    [
      'GymOutgoingCallsWaitForConnections',
      'rate(gym_http_connection_pool_queue_duration_ms_count[5m])',
      'irate(gym_http_connection_pool_queue_duration_ms_count[5m])',
      'recording',
    ],
    // No series kept only while fresh (`rate(x) or present_over_time(x)` is the rate alone).
    [
      'GymOutgoingCallsWaitForConnections',
      ' and present_over_time(gym_http_connection_pool_',
      ' or present_over_time(gym_http_connection_pool_',
      'recording',
    ],
    [
      'GymOutgoingCallsWaitForConnections',
      '(rate(gym_http_connection_pool_queue_duration_ms_count[5m]) and present_over_time(gym_http_connection_pool_queue_duration_ms_count[50s])) or (rate(gym_http_connection_pool_queue_duration_ms_milliseconds_count[5m]) and present_over_time(gym_http_connection_pool_queue_duration_ms_milliseconds_count[50s]))',
      '(rate(gym_http_connection_pool_queue_duration_ms_count[5m]) and present_over_time(gym_http_connection_pool_queue_duration_ms_count[50s]))',
      'recording',
    ],
    [
      'GymOutgoingCallsWaitForConnections',
      '(instance:gym_http_connection_pool_connect:rate5m > 0), 1)',
      '(instance:gym_http_connection_pool_queue_duration_ms_count:rate5m > 0), 1)',
      'recording',
    ],
  ];

  it('loosens every alert at least once', () => {
    expect([...new Set(loosened.map(([alert]) => alert))].sort()).toEqual([...ALERT_NAMES].sort());
  });

  it.each(loosened)('%s: the test file fails when %s becomes %s', async (alert, from, to, file) => {
    const dir = await mkdtemp(join(work, `${alert}-`));
    await mkdir(join(dir, 'generated'), { recursive: true });
    await cp(packageFile('generated/prometheus'), join(dir, 'generated/prometheus'), { recursive: true });
    await cp(TESTS_DIR, join(dir, 'test/promtool'), { recursive: true });
    const rulesFile = join(dir, `generated/prometheus/gym-${file === 'recording' ? 'recording' : 'alerts'}.rules.yml`);
    const original = await readFile(rulesFile, 'utf8');
    if (file === 'recording') expect(original.split(from).length).toBeGreaterThanOrEqual(2);
    else expect(original.split(from)).toHaveLength(2);
    await writeFile(rulesFile, original.replaceAll(from, to));
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
    const alerting: string[] = [];
    for (const file of testFiles) {
      if ((await readFile(join(TESTS_DIR, file), 'utf8')).includes('alert_rule_test:')) alerting.push(file);
    }
    expect(alerting.length).toBeGreaterThanOrEqual(ALERT_NAMES.length);
    const result = await promtool(['test', 'rules', ...alerting], join(dir, 'test/promtool'));
    expect(result.output.match(/FAILED/g)).toHaveLength(alerting.length);
  });
});
