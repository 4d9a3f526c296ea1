// Runs jest once and ends with the line CI reads: `N passed, N failed` (taken from jest's JSON
// results, not its human summary). Extra arguments go to jest (`npm test -- packages/operations`).
//
// Which suites run depends on the Node running this script (jest.config.js picks the SDK line):
// - Node ≥ 22.15 (`npm test` runs on the Node 24 that npm installs from the registry's
//   node-<platform> package): every suite, against OpenTelemetry JS 3.x.
// - Older Node (CI's Node 20 leg, `node scripts/run-jest.mjs`): the libraries' suites only,
//   against OpenTelemetry JS 2.x; the line before the summary says so, and why.
// Skipped suites are named, with the reason, in one line per reason: programs missing from PATH
// (`[needs on PATH: …]` in a title, see @gym/test-kit requireTools) and `[skipped: …]` titles.
//
// A whole run (no paths given) also runs the defect suites of @gym/operations over the packed
// tarballs, installed with this run's SDK line (scripts/packed.mjs; jest project `packed`,
// reused while the libraries' build is unchanged). GYM_PACKED=1 adds that project to a run
// with paths too, GYM_PACKED=0 leaves it out.
//
// GYM_JEST_RESULTS names the results file (default .jest-results.json); GYM_JEST_LABEL, when
// set, prefixes this run's lines so that only scripts/sum-results.mjs prints the bare summary.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { otelLine } from '../jest.config.js';
import { preparePacked } from './packed.mjs';
import { skipSummary } from './skip-summary.mjs';

const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url).pathname;
const jestBin = new URL('bin/jest.js', `file://${require.resolve('jest/package.json')}`).pathname;
const results = process.env.GYM_JEST_RESULTS || new URL('../.jest-results.json', import.meta.url).pathname;
const label = process.env.GYM_JEST_LABEL ? `${process.env.GYM_JEST_LABEL}: ` : '';
/** The libraries (and their test kit): they claim Node ≥ 20.19 and any 2.x or 3.x SDK. */
const LIBRARIES = [
  'constants',
  'core',
  'operations',
  'metrics',
  'sandbox-telemetry',
  'observer',
  'dashboards',
  'http-pool',
  'test-kit',
];
rmSync(results, { force: true });

const args = process.argv.slice(2);
const paths = args.filter((arg) => !arg.startsWith('-'));
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1' };
if (process.env.GYM_PACKED === '1' || (process.env.GYM_PACKED !== '0' && paths.length === 0)) {
  try {
    env.GYM_PACKED_DIR = await preparePacked(otelLine);
    process.stdout.write(`${label}the defect suites also run over the packed tarballs in ${env.GYM_PACKED_DIR}\n`);
  } catch (error) {
    process.stdout.write(
      `${label}packing the libraries failed: ${error?.stderr || error}\n${label}0 passed, 1 failed\n`,
    );
    process.exit(1);
  }
}

if (otelLine === 2 && paths.length === 0) {
  const libraries = LIBRARIES.filter((name) => existsSync(`${root}packages/${name}/test`));
  args.push(...libraries.map((name) => `packages/${name}/`));
  if (env.GYM_PACKED_DIR) args.push('test/packed/');
  process.stdout.write(
    `${label}Node ${process.versions.node}: the libraries' suites (${libraries.join(', ')}) against OpenTelemetry JS 2.x; ` +
      'the bootstrap, demo and repository suites need Node ≥ 22.15 (OpenTelemetry JS 3.x) and run under `npm test`, ' +
      'which uses the Node 24 npm installs (node_modules/.bin/node)\n',
  );
}

const run = spawnSync(
  process.execPath,
  [
    '--experimental-vm-modules',
    '--no-warnings=ExperimentalWarning',
    jestBin,
    '--json',
    `--outputFile=${results}`,
    ...args,
  ],
  { stdio: 'inherit', env },
);

let passed = 0;
let failed = 0;
let suitesFailed = 0;
try {
  const json = JSON.parse(readFileSync(results, 'utf8'));
  passed = json.numPassedTests;
  failed = json.numFailedTests;
  suitesFailed = json.numFailedTestSuites;
  for (const line of skipSummary(json.testResults ?? [], root)) process.stdout.write(`\n${label}${line}`);
} catch {
  failed = Math.max(failed, 1);
}
// A suite that fails to load has no failed tests but is a failure all the same.
if (failed === 0 && suitesFailed > 0) failed = suitesFailed;
process.stdout.write(`\n${label}${passed} passed, ${failed} failed\n`);
process.exit(run.status === 0 && failed === 0 && passed > 0 ? 0 : 1);
