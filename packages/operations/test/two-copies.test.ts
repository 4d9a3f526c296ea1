// Two copies of @gym/operations in one process (an install that did not deduplicate it, each
// copy with its own @gym/core) still export the right queued/active counts and the right
// gym.concurrency.* sums: the live counts and the metered-limit registry live in @gym/core's
// versioned global, not in module state, and a metered limit made by one copy is accepted by
// the other copy's resourcesOperation. Run in a plain Node child process over the build output,
// copied to a temporary folder, so the copies are real files resolved by Node (`npm test`
// builds first).

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

const MAIN = `
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import * as a from 'copy-a';
import * as b from './copy-b/index.mjs';

class Reader extends MetricReader { async onShutdown() {} async onForceFlush() {} }
const reader = new Reader();
const meterProvider = new MeterProvider({ readers: [reader] });
const options = { operation: 'verify', executor: 'process', meterProvider };
const settle = async () => { for (let i = 0; i < 50; i++) await Promise.resolve(); };
let release;
const held = new Promise((resolve) => { release = resolve; });

// Copy A holds the semaphore and runs one unlimited operation; copy B waits for the semaphore.
const semaphore = new Semaphore(1);
const running = [
  a.resourcesOperation(semaphore, options, () => held),
  a.resourcesOperation(null, options, () => held),
  b.resourcesOperation(semaphore, options, () => 'b ran'),
];
// A metered limit of each copy, with the same attributes (summed), and B's limit used through A.
const limitA = a.meteredLimit(pLimit(2), { component: 'resources', limitName: 'shared_pool', meterProvider });
const limitB = b.meteredLimit(new Semaphore(3), { component: 'resources', limitName: 'shared_pool', meterProvider });
running.push(a.resourcesOperation(limitB, options, () => held));
running.push(limitA.run(() => held));
await settle();

const values = async () => {
  const { resourceMetrics } = await reader.collect();
  const out = {};
  for (const metric of resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)) {
    out[metric.descriptor.name] = metric.dataPoints.map((p) => p.value);
  }
  return out;
};
const during = await values();
release();
await Promise.all(running);
await settle();
const after = await values();
console.log(JSON.stringify({
  during,
  after,
  distinct: a.resourcesOperation !== b.resourcesOperation,
  crossCopyState: limitB.state(),
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
  writeFileSync(join(work, 'main.mjs'), MAIN);
});

afterAll(() => {
  if (work !== '') rmSync(work, { recursive: true, force: true });
});

it('two copies, each with its own @gym/core, export the whole queued/active counts and one sum per metered attribute set', async () => {
  // The timeouts are failure guards: a loaded machine starts a child slowly.
  const { stdout } = await run(process.execPath, [join(work, 'main.mjs')], { cwd: work, timeout: 80_000 });
  const result = JSON.parse(stdout) as {
    during: Record<string, unknown[]>;
    after: Record<string, unknown[]>;
    distinct: boolean;
    crossCopyState: Record<string, number>;
  };
  expect(result.distinct).toBe(true); // really two copies
  // A holds the semaphore, runs one unlimited operation and one through B's metered limit;
  // B waits for the semaphore: 3 active, 1 queued, whichever copy's observation the SDK keeps.
  expect(result.during['gym.resources.operation.active']).toEqual([3]);
  expect(result.during['gym.resources.operation.queued']).toEqual([1]);
  // One series per attribute set, summed over both copies' limits: 2 (p-limit) + 3 (semaphore).
  expect(result.during['gym.concurrency.limit']).toEqual([5]);
  expect(result.during['gym.concurrency.active']).toEqual([2]);
  expect(result.during['gym.concurrency.available']).toEqual([3]);
  expect(result.during['gym.concurrency.queue_depth']).toEqual([0]);
  expect(result.after['gym.resources.operation.active']).toEqual([0]);
  expect(result.after['gym.resources.operation.queued']).toEqual([0]);
  expect(result.after['gym.concurrency.active']).toEqual([0]);
  expect(result.crossCopyState).toMatchObject({ limit: 3, active: 0, queued: 0 });
}, 90_000);
