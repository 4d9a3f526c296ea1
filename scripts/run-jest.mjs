// Runs jest once for the whole repository and ends with the line CI reads:
// `N passed, N failed` (taken from jest's JSON results, not its human summary).
// Extra arguments go to jest (`npm test -- packages/operations`).
// .ci/run runs it twice (Node 20, then Node 24) and sums the two: GYM_JEST_RESULTS names the
// results file (default .jest-results.json) and GYM_JEST_LABEL, when set, prefixes this run's
// line (`node 24: N passed, N failed`) so that only scripts/sum-results.mjs prints the bare one.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const jestBin = new URL('bin/jest.js', `file://${require.resolve('jest/package.json')}`).pathname;
const results = process.env.GYM_JEST_RESULTS || new URL('../.jest-results.json', import.meta.url).pathname;
const label = process.env.GYM_JEST_LABEL ? `${process.env.GYM_JEST_LABEL}: ` : '';
rmSync(results, { force: true });

const run = spawnSync(
  process.execPath,
  [
    '--experimental-vm-modules',
    '--no-warnings=ExperimentalWarning',
    jestBin,
    '--json',
    `--outputFile=${results}`,
    ...process.argv.slice(2),
  ],
  { stdio: 'inherit', env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' } },
);

let passed = 0;
let failed = 0;
let suitesFailed = 0;
try {
  const json = JSON.parse(readFileSync(results, 'utf8'));
  passed = json.numPassedTests;
  failed = json.numFailedTests;
  suitesFailed = json.numFailedTestSuites;
} catch {
  failed = Math.max(failed, 1);
}
// A suite that fails to load has no failed tests but is a failure all the same.
if (failed === 0 && suitesFailed > 0) failed = suitesFailed;
process.stdout.write(`\n${label}${passed} passed, ${failed} failed\n`);
process.exit(run.status === 0 && failed === 0 && passed > 0 ? 0 : 1);
