// .ci/run runs the suite on two Node versions and ends with ONE `N passed, N failed` line for
// both, printed by scripts/sum-results.mjs from the JSON results scripts/run-jest.mjs writes.
// The summing is checked here on result files written by hand, failures included.

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

describe('.ci/run', () => {
  const script = readFileSync(join(repo, '.ci', 'run'), 'utf8');

  it('runs the README test command on the default Node and on Node 24, then prints the one summary last', () => {
    const lines = script.trim().split('\n');
    expect(lines.filter((line) => /^\s*(PATH=.*\s)?GYM_JEST_RESULTS=.*npm test\s*$|npm test$/.test(line)).length).toBe(
      2,
    );
    expect(script).toContain('PATH="$(dirname "$GYM_NODE24"):$PATH"');
    expect(script).toContain('export GYM_REQUIRE_NODE24=1');
    expect(lines.at(-1)).toBe('node scripts/sum-results.mjs "$results/node-default.json" "$results/node-24.json"');
  });
});
