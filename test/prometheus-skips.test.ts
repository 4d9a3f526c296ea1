// `npm test` passes on a machine without Prometheus and promtool: every suite that runs one of
// them skips, and the run names it in its one skip line (scripts/skip-summary.mjs) before
// `N passed, N failed`. This file lists the suites that spawn Prometheus or promtool (from their
// sources: the calls that start one), then runs exactly those suites with both programs hidden
// from PATH and checks that each is named in that line and that nothing failed. A new suite
// that spawns Prometheus without `requireTools` fails here, as
// apps/demo/test/prometheus-guardian.test.ts did when it threw "a Prometheus on PATH is required".

import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { findOnPath } from '@gym/test-kit';
import { afterAll, describe, expect, it } from '@jest/globals';

const run = promisify(execFile);
const repo = new URL('..', import.meta.url).pathname;
const PROGRAMS = ['prometheus', 'promtool'];

/**
 * What starts Prometheus or promtool in a test: the demo's and the test support's starters, the
 * orchestrator's `--prometheus`, the guardian that spawns it, and a program's path taken from
 * `requireTools` (`tools.path('promtool')`).
 */
const SPAWNS =
  /\b(startLocalPrometheus|startDemoPrometheus|startPrometheus|spawnGuarded)\(|'--prometheus'|\.path\('(prometheus|promtool)'\)/;

function testFiles(dir: string): string[] {
  return readdirSync(join(repo, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts') && !file.includes('node_modules'))
    .map((file) => join(dir, file));
}

const SELF = 'test/prometheus-skips.test.ts';

/** Suites whose code (comments left out) starts Prometheus or promtool; this file names them only. */
function suitesThatSpawnPrometheus(): string[] {
  return ['packages', 'apps', 'test']
    .flatMap(testFiles)
    .filter((file) => {
      if (file === SELF) return false;
      const code = readFileSync(join(repo, file), 'utf8').replace(/^\s*(\/\/|\*|\/\*).*$/gm, '');
      return SPAWNS.test(code);
    })
    .sort();
}

/**
 * PATH with Prometheus and promtool hidden: each folder that has one of them is replaced by a
 * folder of links to everything else in it (on Debian both live in /usr/bin, beside `sh`).
 */
function pathWithout(programs: readonly string[], parent: string): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .map((dir) => {
      if (dir === '' || !programs.some((name) => findOnPath(name, dir) !== undefined)) return dir;
      const shadow = mkdtempSync(join(parent, 'bin-'));
      for (const entry of readdirSync(dir)) {
        if (!programs.includes(entry)) symlinkSync(join(dir, entry), join(shadow, entry));
      }
      return shadow;
    })
    .join(delimiter);
}

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const describeRun = major > 22 || (major === 22 && minor >= 15) ? describe : describe.skip;

it('finds the suites that spawn Prometheus or promtool (the scan is not vacuous)', () => {
  const suites = suitesThatSpawnPrometheus();
  expect(suites).toEqual(
    expect.arrayContaining([
      'apps/demo/test/e2e-prometheus.test.ts',
      'apps/demo/test/prometheus-guardian.test.ts',
      'packages/dashboards/test/promtool.test.ts',
    ]),
  );
});

describeRun('without Prometheus and promtool on PATH [skipped: needs Node >= 22.15, as npm test runs]', () => {
  const work = mkdtempSync(join(tmpdir(), 'gym-no-prometheus-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('every suite that spawns one skips, and the skip line names it; nothing fails', async () => {
    const suites = suitesThatSpawnPrometheus();
    const PATH = pathWithout(PROGRAMS, work);
    for (const name of PROGRAMS) expect(findOnPath(name, PATH)).toBeUndefined();
    expect(findOnPath('sh', PATH)).toBeDefined();
    // CI's GYM_REQUIRE_TOOLS=1 would turn the skips into failures: this run is a machine without them.
    const { GYM_REQUIRE_TOOLS: _required, GYM_JEST_LABEL: _label, ...inherited } = process.env;
    const env = { ...inherited, PATH, GYM_PACKED: '0', GYM_JEST_RESULTS: join(work, 'r.json') };
    // run-jest.mjs prints its summary on stdout (jest's report goes to stderr), and exits 1 on a failure.
    const { stdout } = await run(process.execPath, [join(repo, 'scripts', 'run-jest.mjs'), ...suites], {
      cwd: repo,
      env,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const lines = stdout.trim().split('\n');
    expect(lines.at(-1)).toMatch(/^[1-9]\d* passed, 0 failed$/);
    const skipLine = lines.find((line) => line.startsWith('skipped ') && line.includes('on PATH')) ?? '';
    const named = /\(([^)]*)\); install:/.exec(skipLine)?.[1]?.split(', ') ?? [];
    expect(named.map((file) => relative('.', file)).sort()).toEqual(suites);
  }, 600_000);
});
