// Two copies of @gym/metrics in one process (an install that did not deduplicate it, each copy
// with its own copy of @gym/core) still export one success rate: the verify tally and the
// orchestrator declaration live in @gym/core's versioned global, not in module state. Run in
// a plain Node child process over the build output, copied to a temporary folder, so the
// copies are real files resolved by Node itself (`npm test` builds first).

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

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'gym-metrics-two-copies-'));
  const modules = join(work, 'node_modules');
  // Copy A: the workspace's own build, resolving @gym/core through the workspace.
  // Copy B: a second @gym/metrics with a second @gym/core, both real copies.
  copyPackage('metrics', join(work, 'copy-b', 'node_modules', '@gym', 'metrics'));
  copyPackage('core', join(work, 'copy-b', 'node_modules', '@gym', 'core'));
  link(join(REPO, 'packages', 'constants'), join(modules, '@gym', 'constants'));
  for (const dep of ['api', 'sdk-metrics', 'core', 'resources', 'semantic-conventions']) {
    const target = join(REPO, 'node_modules', '@opentelemetry', dep);
    if (existsSync(target)) link(target, join(modules, '@opentelemetry', dep));
  }
  writeFileSync(
    join(work, 'copy-b', 'index.mjs'),
    "export * from '@gym/metrics';\nexport { sharedSlot } from '@gym/core/internal';\n",
  );
  writeFileSync(
    join(work, 'main.mjs'),
    [
      "import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';",
      `import * as a from ${JSON.stringify(join(REPO, 'packages', 'metrics', 'dist', 'index.js'))};`,
      "import * as b from './copy-b/index.mjs';",
      'class Reader extends MetricReader { async onShutdown() {} async onForceFlush() {} }',
      'const reader = new Reader();',
      'const meterProvider = new MeterProvider({ readers: [reader] });',
      'const options = { meterProvider };',
      'new a.GymMetrics(options).recordVerify(10, true);',
      'new a.GymMetrics(options).recordVerify(10, true);',
      'new b.GymMetrics(options).recordVerify(10, false);',
      'a.declareOrchestrator();',
      'const { resourceMetrics } = await reader.collect();',
      'const points = Object.fromEntries(resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)',
      '  .map((m) => [m.descriptor.name, m.dataPoints.map((p) => p.value)]));',
      'console.log(JSON.stringify({ points, bIsOrchestrator: b.isOrchestrator(), distinct: a.recordVerify !== b.recordVerify }));',
    ].join('\n'),
  );
});

afterAll(() => {
  if (work !== '') rmSync(work, { recursive: true, force: true });
});

it('two copies of the package, each with its own @gym/core, export one success rate and share the declaration', async () => {
  const { stdout } = await run(process.execPath, [join(work, 'main.mjs')], { cwd: work });
  const result = JSON.parse(stdout) as {
    points: Record<string, unknown[]>;
    bIsOrchestrator: boolean;
    distinct: boolean;
  };
  // Non-vacuous: the two copies really are two modules.
  expect(result.distinct).toBe(true);
  // 2 ok through copy A + 1 failed through copy B: the gauge (last written by B) says 2/3.
  expect(result.points['gym.verify.success_rate']).toEqual([2 / 3]);
  // Both copies wrote the one instrument: its points (however attributes split them) hold all 3 calls.
  const durations = result.points['gym.verify.duration_ms'] as { count: number }[];
  expect(durations.reduce((calls, point) => calls + point.count, 0)).toBe(3);
  expect(result.bIsOrchestrator).toBe(true);
});
