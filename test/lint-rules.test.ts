// The repository rules are enforced by the linter (biome.json and the GritQL plugins in lint/),
// not by hand-written scanners. Each rule is proven here: a violation is planted in a copy of
// the working tree (outside the repository, so nobody else's build or lint sees it), Biome is
// run on the copy with the repository's own configuration, and the diagnostic must name the
// rule. Controls show the allowed places stay allowed, and the unplanted tree lints clean.

import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';

const run = promisify(execFile);
const repo = new URL('..', import.meta.url).pathname;
const biome = join(repo, 'node_modules', '.bin', 'biome');

interface Finding {
  rule: string;
  path: string;
  severity: string;
}

let copy = '';
const planted: string[] = [];

function plant(path: string, text: string): string {
  const full = join(copy, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, text);
  planted.push(full);
  return path;
}

/** Lints `paths` of the copy with the repository's biome.json; returns every diagnostic. */
async function lint(...paths: string[]): Promise<{ findings: Finding[]; exitCode: number }> {
  const args = ['lint', '--vcs-enabled=false', '--reporter=json', '--max-diagnostics=none', ...paths];
  let stdout: string;
  let exitCode = 0;
  try {
    ({ stdout } = await run(biome, args, { cwd: copy, maxBuffer: 64 * 1024 * 1024 }));
  } catch (error) {
    const failed = error as { stdout?: string; code?: number };
    stdout = failed.stdout ?? '';
    exitCode = typeof failed.code === 'number' ? failed.code : 1;
  }
  const report = JSON.parse(stdout) as {
    diagnostics: { category?: string; severity: string; location?: { path?: string } }[];
  };
  return {
    exitCode,
    findings: report.diagnostics.map((d) => ({
      rule: d.category ?? '',
      path: d.location?.path ?? '',
      severity: d.severity,
    })),
  };
}

const rulesIn = (findings: Finding[], path: string) =>
  [...new Set(findings.filter((f) => f.path === path && f.severity === 'error').map((f) => f.rule))].sort();

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'gym-lint-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repo,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file !== '' && file !== '.jest-results.json');
  for (const file of files) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    try {
      copyFileSync(join(repo, file), join(copy, file));
    } catch {
      // Deleted in the working tree but still in the index: not part of the tree being linted.
    }
  }
}, 60_000);

afterEach(() => {
  for (const file of planted.splice(0)) rmSync(file, { force: true });
});

afterAll(() => rmSync(copy, { recursive: true, force: true }));

describe('biome lint fails on a planted violation, naming the rule', () => {
  it('an import cycle in a library (type-only imports count too)', async () => {
    const a = plant(
      'packages/operations/src/planted-cycle-a.ts',
      "import type { B } from './planted-cycle-b.js';\nexport interface A { b?: B }\n",
    );
    const b = plant(
      'packages/operations/src/planted-cycle-b.ts',
      "import type { A } from './planted-cycle-a.js';\nexport interface B { a?: A }\n",
    );
    const { findings, exitCode } = await lint(a, b);
    expect(exitCode).not.toBe(0);
    expect(rulesIn(findings, a)).toContain('lint/suspicious/noImportCycles');
    expect(rulesIn(findings, b)).toContain('lint/suspicious/noImportCycles');
  });

  it('`export *` and `export * as` from a module', async () => {
    const file = plant('packages/metrics/src/planted-reexport.ts', "export * from './index.js';\n");
    const named = plant('packages/core/src/planted-reexport-as.ts', "export * as core from './index.js';\n");
    const { findings, exitCode } = await lint(file, named);
    expect(exitCode).not.toBe(0);
    expect(rulesIn(findings, file)).toContain('lint/performance/noReExportAll');
    expect(rulesIn(findings, named)).toContain('lint/performance/noReExportAll');
  });

  it.each([
    [
      '@opentelemetry/sdk-metrics',
      "import { MeterProvider } from '@opentelemetry/sdk-metrics';\nexport const p = MeterProvider;\n",
    ],
    [
      '@opentelemetry/sdk-trace-base (deep path)',
      "import { x } from '@opentelemetry/sdk-trace-base/build/src/x.js';\nexport const p = x;\n",
    ],
    [
      '@opentelemetry/exporter-prometheus',
      "export { PrometheusExporter } from '@opentelemetry/exporter-prometheus';\n",
    ],
    [
      '@opentelemetry/resources',
      "import { resourceFromAttributes } from '@opentelemetry/resources';\nexport const p = resourceFromAttributes;\n",
    ],
    ['@opentelemetry/core', "import { hrTime } from '@opentelemetry/core';\nexport const p = hrTime;\n"],
    ['a dynamic import of @opentelemetry/sdk-node', "export const load = () => import('@opentelemetry/sdk-node');\n"],
  ])('an SDK import in a library source: %s', async (_label, text) => {
    const files = ['operations', 'metrics', 'sandbox-telemetry', 'core', 'constants'].map((pkg) =>
      plant(`packages/${pkg}/src/planted-sdk.ts`, text),
    );
    const { findings, exitCode } = await lint(...files);
    expect(exitCode).not.toBe(0);
    for (const file of files) expect(rulesIn(findings, file)).toContain('lint/style/noRestrictedImports');
  });

  it('an undeclared dependency in a library source', async () => {
    const file = plant('packages/operations/src/planted-undeclared.ts', "export { z } from 'zod';\n");
    const { findings, exitCode } = await lint(file);
    expect(exitCode).not.toBe(0);
    expect(rulesIn(findings, file)).toContain('lint/correctness/noUndeclaredDependencies');
  });

  it('a library writing to stdout/stderr or the console', async () => {
    const stream = plant(
      'packages/sandbox-telemetry/src/planted-output.ts',
      'export const say = (s: string) => process.stderr.write(s);\n',
    );
    const consoled = plant(
      'packages/operations/src/planted-console.ts',
      "export const say = () => console.warn('x');\n",
    );
    const { findings } = await lint(stream, consoled);
    expect(rulesIn(findings, stream)).toEqual(['plugin']);
    expect(rulesIn(findings, consoled)).toContain('lint/suspicious/noConsole');
  });
});

describe('the allowed places stay allowed (the rules are not blanket bans)', () => {
  it('@gym/otel-bootstrap sources and every package test may import the SDK', async () => {
    const sdk = "import { MeterProvider } from '@opentelemetry/sdk-metrics';\nexport const p = MeterProvider;\n";
    const bootstrap = plant('packages/otel-bootstrap/src/planted-sdk.ts', sdk);
    const test = plant('packages/operations/test/planted-sdk.ts', sdk);
    const { findings } = await lint(bootstrap, test);
    expect(rulesIn(findings, bootstrap)).toEqual([]);
    expect(rulesIn(findings, test)).toEqual([]);
  });

  it('the unplanted tree breaks none of these rules', async () => {
    // Other lint findings (formatting, the recommended preset) are `npm run lint`'s business.
    const enforced = new Set([
      'lint/suspicious/noImportCycles',
      'lint/performance/noReExportAll',
      'lint/correctness/noUndeclaredDependencies',
      'lint/style/noRestrictedImports',
      'lint/suspicious/noConsole',
      'plugin',
    ]);
    const { findings } = await lint('.');
    expect(findings.filter((f) => enforced.has(f.rule)).map((f) => `${f.path}: ${f.rule}`)).toEqual([]);
  }, 300_000);
});
