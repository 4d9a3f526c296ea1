// The libraries under a user's OpenTelemetry 3.x SDK on Node 24, as a user gets them: the
// tarballs (`npm pack`) are installed into an empty project outside the repository next to
// @opentelemetry/api 1.10, sdk-metrics 3.x and sdk-trace 3.x, and test/support/otel3-probe.mjs
// runs there under Node 24 with the user's providers injected. The SDK's own output must show
// the operations, metrics and sandbox records exactly.
//
// Node 24 is the one `npm test` runs on (npm installs it from the registry's node-<platform>
// package, an optional root dependency), or GYM_NODE24. Without one the suite is skipped and
// its title says why, unless GYM_REQUIRE_NODE24=1 (set by CI), where that is a failure.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  closure,
  emptyProject,
  install,
  installedVersions,
  type Packed,
  packAll,
  publishablePackages,
  repo,
  run,
} from './support/pack.js';

/** The Node 24 binary to use, or why there is none. */
function findNode24(): { node: string } | { reason: string } {
  // `npm test` already runs on it; else the one npm installed for this platform
  // (node_modules/.bin/node, from the optional node-<platform> root dependency), else GYM_NODE24.
  const candidates = [process.execPath, join(repo, 'node_modules', '.bin', 'node')];
  if (process.env.GYM_NODE24) candidates.push(process.env.GYM_NODE24);
  for (const node of candidates) {
    try {
      if (execFileSync(node, ['--version'], { encoding: 'utf8' }).startsWith('v24.')) return { node };
    } catch {
      // Not runnable here: try the next one.
    }
  }
  return {
    reason: `no Node 24: this is Node ${process.versions.node}, npm installed no node-${process.platform}-${process.arch} package, and GYM_NODE24 is unset`,
  };
}

const found = findNode24();
const node24 = 'node' in found ? found.node : '';
const reason = 'reason' in found ? found.reason : '';

// Under CI (GYM_REQUIRE_NODE24=1) a missing binary fails here instead of skipping the suite.
if (node24 === '' && process.env.GYM_REQUIRE_NODE24 === '1') {
  it('finds the Node 24 binary CI requires', () => {
    throw new Error(reason);
  });
}

const LIBRARIES = ['@gym/constants', '@gym/core', '@gym/operations', '@gym/metrics', '@gym/sandbox-telemetry'];
const USER_SDK = ['@opentelemetry/api@~1.10.0', '@opentelemetry/sdk-metrics@^3', '@opentelemetry/sdk-trace@^3'];

interface Histogram {
  count: number;
  sum: number;
}
interface ProbeReport {
  node: string;
  versions: { api: string; sdkMetrics: string; sdkTrace: string };
  operations: {
    answer: unknown;
    tool: unknown;
    rethrownSameError: boolean;
    verifyOk?: Histogram;
    toolOk?: Histogram;
    toolError?: Histogram;
    queued?: Histogram;
  };
  metrics: { rollout?: Histogram; verify?: Histogram; successRate?: number };
  sandbox: {
    carriedProvider: unknown;
    expectedName: string;
    spans: { name: string; attributes: Record<string, unknown> }[];
  };
  observer: { inFlight?: number } | null;
  metricNames: string[];
}

const suite = node24 === '' ? describe.skip : describe;
const title = `under OpenTelemetry JS 3.x on Node 24${node24 === '' ? ` [skipped: ${reason}]` : ''}`;

suite(title, () => {
  const publishable = publishablePackages();
  const byName = new Map(publishable.map((pkg) => [pkg.manifest.name, pkg]));
  const wanted = [...LIBRARIES, ...(byName.has('@gym/observer') ? ['@gym/observer'] : [])];
  const work = mkdtempSync(join(tmpdir(), 'gym-otel3-'));
  // npm itself runs on Node 24 too, so engines are resolved as a Node 24 user's would be.
  const env = { ...process.env, PATH: `${dirname(node24)}:${process.env.PATH ?? ''}` };
  let project = '';
  let report: ProbeReport;

  beforeAll(async () => {
    const names = new Set(wanted.flatMap((name) => [...closure(name, byName)]));
    const packed: Map<string, Packed> = await packAll(
      publishable.filter((pkg) => names.has(pkg.manifest.name)),
      work,
    );
    project = emptyProject(work, { type: 'module' });
    await install(project, [...[...packed.values()].map((p) => p.tarball), ...USER_SDK], env);
    copyFileSync(join(repo, 'test', 'support', 'otel3-probe.mjs'), join(project, 'probe.mjs'));
    const { stdout } = await run(node24, ['probe.mjs'], { cwd: project, env });
    report = JSON.parse(stdout) as ProbeReport;
  }, 300_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('really ran on Node 24 with the user-made 3.x SDK and API 1.10 (one copy of each)', () => {
    expect(report.node).toMatch(/^v24\./);
    expect(report.versions.api).toMatch(/^1\.10\./);
    expect(report.versions.sdkMetrics).toMatch(/^3\./);
    expect(report.versions.sdkTrace).toMatch(/^3\./);
    const versions = installedVersions(project);
    const duplicated = [...versions]
      .filter(([name, found]) => name.startsWith('@opentelemetry/') && found.size > 1)
      .map(([name, found]) => `${name}: ${[...found].join(', ')}`);
    expect(duplicated).toEqual([]);
    for (const name of wanted) expect(versions.get(name)?.size).toBe(1);
  });

  it('@gym/operations: results and errors pass through, every operation is measured once', () => {
    const { operations } = report;
    expect(operations.answer).toBe(42);
    expect(operations.tool).toBe('ran');
    expect(operations.rethrownSameError).toBe(true);
    expect(operations.verifyOk?.count).toBe(1);
    expect(operations.toolOk?.count).toBe(1);
    expect(operations.toolError?.count).toBe(1);
    expect(operations.queued?.count).toBe(2);
  });

  it('@gym/metrics: rollout and verify durations and the success rate', () => {
    expect(report.metrics.rollout).toEqual({ count: 1, sum: 120 });
    expect(report.metrics.verify).toEqual({ count: 2, sum: 80 });
    expect(report.metrics.successRate).toBe(0.5);
  });

  it('@gym/sandbox-telemetry: the request span with its requested resources', () => {
    const { sandbox } = report;
    expect(sandbox.carriedProvider).toBe('local');
    expect(sandbox.spans.map((span) => span.name)).toEqual([sandbox.expectedName]);
    expect(sandbox.spans[0]?.attributes).toMatchObject({
      'nemo.gym.sandbox.provider': 'local',
      'nemo.gym.sandbox.requested.cpu': 2,
      'nemo.gym.sandbox.requested.memory_mib': 512,
    });
  });

  it('@gym/observer (when it is a package): process and in-flight series', () => {
    if (!wanted.includes('@gym/observer')) {
      expect(report.observer).toBeNull();
      return;
    }
    expect(report.observer).toEqual({ inFlight: 0 });
    expect(report.metricNames).toEqual(expect.arrayContaining(['process.cpu.time', 'process.memory.usage']));
  });

  it('every library imports under Node 24 as ESM and as CommonJS', async () => {
    for (const name of wanted) {
      const esm = await run(
        node24,
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(name)}); console.log(Object.keys(m).length);`,
        ],
        { cwd: project, env },
      );
      expect(Number(esm.stdout)).toBeGreaterThan(0);
      const cjs = await run(node24, ['-e', `console.log(Object.keys(require(${JSON.stringify(name)})).length);`], {
        cwd: project,
        env,
      });
      expect(Number(cjs.stdout)).toBeGreaterThan(0);
    }
  });
});
