// Two copies of @gym/operations in one process (an install that did not deduplicate it, each
// copy with its own @gym/core). Their state lives in core's shared slot, so the counts of both
// copies are summed in one export, and the admission errors of either copy pass `instanceof` of
// the other. Run in a plain Node child process over the build output, copied to a temporary
// folder, so the copies are real files resolved by Node (`npm test` builds first).

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { copyBuiltPackage as copyPackage, linkDirectory as link, REPO_ROOT } from '@gym/test-kit';
import { afterAll, beforeAll, expect, it } from '@jest/globals';

const run = promisify(execFile);
const REPO = REPO_ROOT;
let work = '';

// main.mjs: both copies hold one operation and one slot of a metered limit with the same names,
// then one collection. main-throwing.mjs: a logger that throws is set first, then the second
// copy loads (a dynamic import) and is used: the logger's error must reach nobody.
const mainScript = (throwingLogger: boolean) => `
import { diag, metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Semaphore } from 'async-mutex';
import * as a from 'copy-a';
${throwingLogger ? '' : "import * as b from './copy-b/index.mjs';"}
const warnings = [];
diag.setLogger({
  warn: (m) => { ${throwingLogger ? "throw new Error('logger down');" : 'warnings.push(m);'} },
  error() {}, info() {}, debug() {}, verbose() {},
});
${throwingLogger ? "const b = await import('./copy-b/index.mjs');" : ''}
class Reader extends MetricReader { async onShutdown() {} async onForceFlush() {} }
const reader = new Reader();
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
const options = { operation: 'tool', executor: 'inline' };
const results = [
  await a.resourcesOperation(null, options, () => 'a'),
  await b.resourcesOperation(null, options, () => 'b'),
  await b.resourcesOperation(null, options, () => 'b again'),
];
let open;
const gate = new Promise((r) => { open = r; });
const names = { component: 'resources', limitName: 'shared' };
const held = [a, b].map((copy) => copy.resourcesOperation(copy.meteredLimit(new Semaphore(2), names), options, () => gate));
await new Promise((r) => setTimeout(r, 10));
const { resourceMetrics } = await reader.collect();
const points = Object.fromEntries(resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)
  .map((m) => [m.descriptor.name, m.dataPoints.map((p) => p.value)]));
open();
await Promise.all(held);
const refuse = async (copy) => {
  const limit = copy.meteredLimit(new Semaphore(1), { component: 'resources', limitName: 'pool', maxQueued: 0 });
  let release;
  const held = limit.run(() => new Promise((r) => { release = r; }));
  const error = await limit.run(() => 1).catch((e) => e);
  release();
  await held;
  return error;
};
const fromA = await refuse(a);
const fromB = await refuse(b);
const timeoutB = new b.AdmissionTimeoutError('pool', 5);
console.log(JSON.stringify({
  distinct: a.resourcesOperation !== b.resourcesOperation,
  results,
  points,
  warnings,
  crossRejected: [fromA instanceof b.AdmissionRejectedError, fromB instanceof a.AdmissionRejectedError],
  crossTimeout: timeoutB instanceof a.AdmissionTimeoutError,
  notConfused: [fromB instanceof a.AdmissionTimeoutError, timeoutB instanceof a.AdmissionRejectedError, new Error('x') instanceof a.AdmissionRejectedError],
}));
`;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'gym-operations-two-copies-'));
  const modules = join(work, 'node_modules');
  // Copy A: the workspace's own build. Copy B: a second @gym/operations with a second @gym/core.
  link(join(REPO, 'packages', 'operations'), join(modules, 'copy-a'));
  copyPackage('operations', join(work, 'copy-b', 'node_modules', '@gym', 'operations'));
  copyPackage('core', join(work, 'copy-b', 'node_modules', '@gym', 'core'));
  link(join(REPO, 'packages', 'constants'), join(modules, '@gym', 'constants'));
  link(join(REPO, 'packages', 'core'), join(modules, '@gym', 'core'));
  for (const dep of ['api', 'sdk-metrics', 'core', 'resources', 'semantic-conventions']) {
    const target = join(REPO, 'node_modules', '@opentelemetry', dep);
    if (existsSync(target)) link(target, join(modules, '@opentelemetry', dep));
  }
  for (const dep of ['async-mutex', 'p-limit', 'yocto-queue', 'tslib']) {
    const local = join(REPO, 'packages', 'operations', 'node_modules', dep);
    const root = join(REPO, 'node_modules', dep);
    if (existsSync(local)) link(local, join(modules, dep));
    else if (existsSync(root)) link(root, join(modules, dep));
  }
  writeFileSync(join(work, 'copy-b', 'index.mjs'), "export * from '@gym/operations';\n");
  writeFileSync(join(work, 'main.mjs'), mainScript(false));
  writeFileSync(join(work, 'main-throwing.mjs'), mainScript(true));
});

afterAll(() => {
  if (work !== '') rmSync(work, { recursive: true, force: true });
});

type Result = {
  distinct: boolean;
  results: string[];
  points: Record<string, unknown[]>;
  warnings: string[];
  crossRejected: boolean[];
  crossTimeout: boolean;
  notConfused: boolean[];
};

async function runMain(script: string): Promise<Result> {
  // The timeout is a failure guard: a loaded machine starts a child slowly.
  const { stdout } = await run(process.execPath, [join(work, script)], { cwd: work, timeout: 80_000 });
  return JSON.parse(stdout) as Result;
}

it('the counts of both copies are summed in one export, without a warning; admission errors keep instanceof across copies', async () => {
  const result = await runMain('main.mjs');
  expect(result.distinct).toBe(true); // really two copies
  expect(result.results).toEqual(['a', 'b', 'b again']);
  expect(result.points['gym.resources.operation.active']).toEqual([2]);
  expect(result.points['gym.concurrency.active']).toEqual([2]);
  expect(result.points['gym.concurrency.limit']).toEqual([4]);
  expect(result.warnings).toEqual([]);
  expect(result.crossRejected).toEqual([true, true]);
  expect(result.crossTimeout).toBe(true);
  expect(result.notConfused).toEqual([false, false, false]);
}, 90_000);

it('a diag logger that throws: loading and using the second copy still works', async () => {
  const result = await runMain('main-throwing.mjs');
  expect(result.results).toEqual(['a', 'b', 'b again']);
  expect(result.crossRejected).toEqual([true, true]);
}, 90_000);
