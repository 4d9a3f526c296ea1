// .ci/run runs two test legs (the libraries on Node 20, then `npm test` on Node 24) and ends with
// ONE `N passed, N failed` line for both, printed by scripts/sum-results.mjs from the JSON results
// scripts/run-jest.mjs writes; skips are named by scripts/skip-summary.mjs. Checked here on
// result files written by hand, failures included.

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from '@jest/globals';

const run = promisify(execFile);
const repo = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'gym-ci-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function results(name: string, passed: number, failed: number, failedSuites = 0): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({ numPassedTests: passed, numFailedTests: failed, numFailedTestSuites: failedSuites }),
  );
  return path;
}

async function sum(...files: string[]): Promise<{ out: string; code: number }> {
  try {
    const { stdout } = await run(process.execPath, [join(repo, 'scripts', 'sum-results.mjs'), ...files]);
    return { out: stdout, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; code: number };
    return { out: failed.stdout, code: failed.code };
  }
}

describe('scripts/sum-results.mjs', () => {
  it('sums the two runs into one line and succeeds when nothing failed', async () => {
    expect(await sum(results('a.json', 300, 0), results('b.json', 298, 0))).toEqual({
      out: '598 passed, 0 failed\n',
      code: 0,
    });
  });

  it('fails when either run failed a test', async () => {
    expect(await sum(results('c.json', 300, 0), results('d.json', 297, 2))).toEqual({
      out: '597 passed, 2 failed\n',
      code: 1,
    });
  });

  it('counts a suite that failed to load, a missing results file, and no files at all as failures', async () => {
    expect(await sum(results('e.json', 10, 0, 1), join(dir, 'absent.json'))).toEqual({
      out: '10 passed, 2 failed\n',
      code: 1,
    });
    expect(await sum()).toEqual({ out: '0 passed, 1 failed\n', code: 1 });
  });
});

describe('scripts/skip-summary.mjs', () => {
  const suite = (name: string, ...tests: { title: string; ancestorTitles?: string[]; status?: string }[]) => ({
    name: join(repo, name),
    assertionResults: tests.map((test) => ({ status: 'pending', ancestorTitles: [], ...test })),
  });

  it('names every suite skipped for a missing program in ONE line, with how to install it', async () => {
    const { skipSummary } = (await import(join(repo, 'scripts', 'skip-summary.mjs'))) as {
      skipSummary: (results: unknown[], root: string) => string[];
    };
    const lines = skipSummary(
      [
        suite('a.test.ts', { title: 'x', ancestorTitles: ['promtool [needs on PATH: promtool]'] }),
        suite('b.test.ts', { title: 'y [needs on PATH: prometheus]' }, { title: 'z [needs on PATH: prometheus]' }),
        suite('c.test.ts', { title: 'runs', status: 'passed' }),
        suite('d.test.ts', { title: 'w', ancestorTitles: ['under 3.x [skipped: no Node 24 here]'] }),
        suite('e.test.ts', { title: 'unexplained' }),
      ],
      repo,
    );
    expect(lines).toEqual([
      'skipped 2 suite(s) that need prometheus and promtool on PATH (a.test.ts, b.test.ts); ' +
        'install: Debian/Ubuntu: apt-get install prometheus; Homebrew: brew install prometheus',
      'skipped tests in d.test.ts: no Node 24 here',
      'skipped tests in e.test.ts: no reason given (mark it: [skipped: why])',
    ]);
    expect(skipSummary([suite('c.test.ts', { title: 'runs', status: 'passed' })], repo)).toEqual([]);
  });
});

describe('.ci/run', () => {
  const script = readFileSync(join(repo, '.ci', 'run'), 'utf8');
  const lines = script.trim().split('\n');

  it('runs the libraries on the machine Node, then the README test command, then prints the one summary last', () => {
    expect(lines.filter((line) => /GYM_JEST_RESULTS=.*node scripts\/run-jest\.mjs$/.test(line))).toHaveLength(1);
    expect(lines.filter((line) => /GYM_JEST_RESULTS=.*npm test$/.test(line))).toHaveLength(1);
    expect(lines.at(-1)).toBe(
      'node scripts/sum-results.mjs "$results/node-default.json" "$results/node-24.json" "$results/parity.json" "$results/collector.json"',
    );
  });

  it('installs the Gym oracle (cached) and runs the parity suite as one step, whose results join the summary', () => {
    expect(lines.filter((line) => line.startsWith('bash tools/gym-oracle/install.sh'))).toHaveLength(1);
    expect(
      lines.filter((line) =>
        /GYM_REQUIRE_ORACLE=1 GYM_JEST_RESULTS="\$results\/parity\.json".*npm run e2e:parity$/.test(line),
      ),
    ).toHaveLength(1);
  });

  it('builds the Collector (cached) and runs its suite as one step, whose results join the summary', () => {
    expect(
      lines.filter((line) => /^GYM_JEST_RESULTS="\$results\/collector\.json".* npm run e2e:collector$/.test(line)),
    ).toHaveLength(1);
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['e2e:collector']).toMatch(/^npm run build && node scripts\/otelcol\.mjs --optional && /);
  });

  it('installs Prometheus and promtool and fails, not skips, when a program or Node 24 is missing', () => {
    expect(script).toContain('apt-get install -y -qq --no-install-recommends prometheus');
    expect(script).toContain('export GYM_REQUIRE_TOOLS=1');
    expect(script).toContain('export GYM_REQUIRE_NODE24=1');
    expect(script).not.toMatch(/protoc|protobuf-compiler/);
  });
});
