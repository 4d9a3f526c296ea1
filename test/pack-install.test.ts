// "Install only the piece you need", proven: every publishable package is packed with
// `npm pack`, installed ALONE into an empty project outside this repository (with only its
// internal dependencies' tarballs and its peer @opentelemetry/api), and imported there with
// plain node, as ESM and as CommonJS require (Node >= 20.19). A package that leans on a
// sibling or on a root devDependency cannot resolve it from /tmp and fails here. Each tarball
// also passes @arethetypeswrong/cli with its default profile: `require` resolves to
// dist/index.cjs (which hands require() the ESM build) with CommonJS types, `import` to the ESM.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  closure,
  emptyProject,
  install,
  installedCopies,
  installedVersions,
  type Manifest,
  type Packed,
  packAll,
  publishablePackages,
  repo,
  run,
} from './support/pack.js';

const attw = join(repo, 'node_modules', '.bin', 'attw');

const publishable = publishablePackages();
const byName = new Map(publishable.map((pkg) => [pkg.manifest.name, pkg]));

const work = mkdtempSync(join(tmpdir(), 'gym-pack-'));
let packed = new Map<string, Packed>();

beforeAll(async () => {
  packed = await packAll(publishable, work);
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

it('finds the publishable packages (the scan is not vacuous)', () => {
  expect(publishable.map((pkg) => pkg.manifest.name)).toContain('@gym/constants');
  expect(publishable.length).toBeGreaterThanOrEqual(1);
  // The private test kit is a workspace, never a published package.
  expect(publishable.map((pkg) => pkg.manifest.name)).not.toContain('@gym/test-kit');
});

describe.each(publishable.map((pkg) => pkg.manifest.name))('%s', (name) => {
  it('ships dist/, package.json, README.md, LICENSE and nothing else', () => {
    const files = packed.get(name)?.files ?? [];
    const outside = files.filter(
      (file) => !file.startsWith('dist/') && !['package.json', 'README.md', 'LICENSE'].includes(file),
    );
    expect(outside).toEqual([]);
    for (const required of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts']) {
      expect(files).toContain(required);
    }
    expect(files.some((file) => file.endsWith('.test.js') || file.includes('tsbuildinfo'))).toBe(false);
  });

  it('passes @arethetypeswrong/cli with its default profile (no CJSResolvesToESM, no other problem)', async () => {
    const tarball = packed.get(name)?.tarball as string;
    const result = await run(attw, [tarball, '--format', 'json'], { maxBuffer: 64 * 1024 * 1024 }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string }) => error.stdout ?? '',
    );
    // `problems` is keyed by kind, e.g. { CJSResolvesToESM: [{ entrypoint: '.', … }] }.
    const { analysis, problems } = JSON.parse(result) as {
      analysis: { packageName: string };
      problems: Record<string, unknown[]>;
    };
    expect(analysis.packageName).toBe(name);
    expect(problems).toEqual({});
  }, 120_000);

  it('installs alone and imports with plain node as ESM and as CommonJS', async () => {
    const project = emptyProject(work);
    const manifest = byName.get(name)?.manifest as Manifest;
    const specs = [...closure(name, byName)].map((dep) => packed.get(dep)?.tarball as string);
    for (const [peer, range] of Object.entries(manifest.peerDependencies ?? {})) specs.push(`${peer}@${range}`);
    await install(project, specs);

    const esm = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(name)}); console.log(JSON.stringify(Object.keys(m).sort()));`,
      ],
      {
        cwd: project,
      },
    );
    const esmExports = JSON.parse(esm.stdout) as string[];
    expect(esmExports.length).toBeGreaterThan(0);

    const cjs = await run(
      process.execPath,
      [
        '-e',
        `const m = require(${JSON.stringify(name)}); console.log(JSON.stringify(Object.keys(m).filter((k) => k !== '__esModule' && k !== 'module.exports').sort()));`,
      ],
      {
        cwd: project,
      },
    );
    expect(JSON.parse(cjs.stdout)).toEqual(esmExports);
    // require() gets the ESM build itself, not a copy: one module instance for both.
    const same = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module'; const m = await import(${JSON.stringify(name)}); const r = createRequire(process.cwd() + '/')(${JSON.stringify(name)}); const k = Object.keys(m).find((key) => typeof m[key] === 'function' || typeof m[key] === 'object'); console.log(JSON.stringify(k !== undefined && m[k] === r[k]));`,
      ],
      { cwd: project },
    );
    expect(same.stdout.trim()).toBe('true');
  }, 180_000);
});

// The SDK line the bootstrap carries (2.x or 3.x), read from its manifest, so these hold on either.
const bootstrapManifest = byName.get('@gym/otel-bootstrap')?.manifest;
const line = (bootstrapManifest?.dependencies?.['@opentelemetry/sdk-metrics'] ?? '').replace(/^\^/, '').split('.')[0];
const apiRange = bootstrapManifest?.peerDependencies?.['@opentelemetry/api'] ?? '^1.9.0';
const tracePackage =
  bootstrapManifest?.dependencies?.['@opentelemetry/sdk-trace'] !== undefined ? 'sdk-trace' : 'sdk-trace-base';

describe(`@gym/otel-bootstrap next to a user's own ${line}.x SDK packages`, () => {
  const name = '@gym/otel-bootstrap';
  const SDK = ['sdk-metrics', tracePackage, 'resources', 'core'].map((pkg) => `@opentelemetry/${pkg}`);
  const bootstrapSpecs = () => [...closure(name, byName)].map((dep) => packed.get(dep)?.tarball as string);

  /** The version of `dependency` that the newest release of `pkg` within `range` asks for. */
  async function pinnedBy(pkg: string, range: string, dependency: string): Promise<string> {
    const { stdout } = await run('npm', ['view', `${pkg}@${range}`, 'dependencies', '--json']);
    const parsed = JSON.parse(stdout) as Record<string, string> | Record<string, string>[];
    const newest = Array.isArray(parsed) ? parsed[parsed.length - 1] : parsed;
    return newest?.[dependency] as string;
  }

  it(`with the newest ${line}.x SDK release its exporters support: one copy of each OpenTelemetry package`, async () => {
    // The exporters of a 2.x line (exporter-prometheus, exporter-*-otlp-proto 0.2xx) pin the
    // SDK version they were released with; the newest SDK release they support is the newest a
    // user can install next to them without two copies. The exporters are pinned exactly: a
    // later 0.2xx patch of one exporter pins a later SDK than the others, so a caret on a 0.x
    // exporter would split the bootstrap's own tree.
    const range = byName.get(name)?.manifest.dependencies?.['@opentelemetry/exporter-prometheus'] as string;
    expect(range).toMatch(/^0\.\d+\.\d+$/);
    const version = await pinnedBy('@opentelemetry/exporter-prometheus', range, '@opentelemetry/sdk-metrics');
    expect(version).toMatch(new RegExp(`^${line}\\.\\d+\\.\\d+$`));

    const project = emptyProject(work);
    await install(project, [
      ...bootstrapSpecs(),
      `@opentelemetry/api@${apiRange}`,
      ...SDK.map((pkg) => `${pkg}@${version}`),
    ]);
    const versions = installedVersions(project);
    const otel = [...versions].filter(([pkg]) => pkg.startsWith('@opentelemetry/'));
    // Non-vacuous: the user's SDK packages and the bootstrap's exporters are really there.
    expect(otel.map(([pkg]) => pkg)).toEqual(
      expect.arrayContaining(['@opentelemetry/api', ...SDK, '@opentelemetry/exporter-prometheus']),
    );
    const duplicated = otel
      .filter(([, found]) => found.size > 1)
      .map(([pkg, found]) => `${pkg}: ${[...found].join(', ')}`);
    expect(duplicated).toEqual([]);
    for (const pkg of SDK) expect([...(versions.get(pkg) ?? [])]).toEqual([version]);
  }, 300_000);

  it(`with the newest ${line}.x SDK: the bootstrap uses the user's copies and one API; only upstream pins nest older ones`, async () => {
    const project = emptyProject(work);
    await install(project, [
      ...bootstrapSpecs(),
      `@opentelemetry/api@${apiRange}`,
      ...SDK.map((pkg) => `${pkg}@^${line}`),
    ]);
    const copies = installedCopies(project);
    expect(copies.get(name)?.length).toBe(1);
    expect(copies.get('@opentelemetry/api')?.map((copy) => copy.path)).toEqual(['node_modules/@opentelemetry/api']);
    for (const pkg of SDK) {
      // The user's copy is the top-level one, and the bootstrap resolves to it (nothing nested under it).
      const top = copies.get(pkg)?.find((copy) => copy.path === `node_modules/${pkg}`);
      expect(`${pkg}@${top?.version}`).toMatch(new RegExp(`@${line}\\.`));
    }
    const nestedUnderBootstrap = [...copies.values()]
      .flat()
      .filter((copy) => copy.path.startsWith(`node_modules/${name}/node_modules/@opentelemetry/`));
    expect(nestedUnderBootstrap).toEqual([]);
    // Any second copy sits under an upstream OpenTelemetry package that pins its SDK exactly
    // (the exporters and what they bring), never under a @gym package or at the top level.
    const strays = [...copies]
      .filter(([pkg, found]) => pkg.startsWith('@opentelemetry/') && found.length > 1)
      .flatMap(([, found]) => found.filter((copy) => copy.path.split('/node_modules/').length > 1))
      .filter((copy) => !/^node_modules\/@opentelemetry\/[^/]+\/node_modules\//.test(copy.path));
    expect(strays).toEqual([]);
  }, 300_000);
});
