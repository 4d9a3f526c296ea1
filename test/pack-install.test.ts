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
import { decodeOtlpMetrics } from '@gym/test-kit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOtlpReceiver } from '../packages/otel-bootstrap/test/helpers/otlp-receiver.js';
import {
  closure,
  emptyProject,
  install,
  installedCopies,
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

// The bootstrap needs Node >= 22.15 (OpenTelemetry JS 3.x); on an older Node its own tests are skipped.
const [nodeMajor = 0, nodeMinor = 0] = process.versions.node.split('.').map(Number);
const bootstrapNode = nodeMajor > 22 || (nodeMajor === 22 && nodeMinor >= 15);
const describeBootstrap = bootstrapNode ? describe : describe.skip;

describeBootstrap(
  '@gym/otel-bootstrap installed alone on Node >= 22.15 (skipped on older Node: it needs 22.15)',
  () => {
    const name = '@gym/otel-bootstrap';
    const SDK = ['sdk-metrics', 'sdk-trace', 'resources', 'core'].map((pkg) => `@opentelemetry/${pkg}`);
    const bootstrapSpecs = () => [...closure(name, byName)].map((dep) => packed.get(dep)?.tarball as string);

    it('next to @opentelemetry/api 1.10: no peer warning, one copy of every OpenTelemetry package, a real scrape and a real OTLP export', async () => {
      const project = emptyProject(work);
      const { stderr } = await install(project, [
        ...bootstrapSpecs(),
        '@opentelemetry/api@^1.10.0',
        '--strict-peer-deps',
      ]);
      expect(stderr).not.toMatch(/ERESOLVE|peer dep/i);
      const otel = [...installedCopies(project)].filter(([pkg]) => pkg.startsWith('@opentelemetry/'));
      expect(otel.map(([pkg]) => pkg)).toEqual(expect.arrayContaining(['@opentelemetry/api', ...SDK]));
      expect(otel.filter(([, copies]) => copies.length > 1)).toEqual([]);

      const receiver = await startOtlpReceiver();
      try {
        const url = receiver.url;
        const script = `
        const { initTelemetry, shutdownTelemetry } = await import('@gym/otel-bootstrap');
        const handle = await initTelemetry({ serverName: 'packed', serverType: 'resources_servers' });
        handle.meter.createCounter('gym.test.packed').add(3);
        let scraped = '';
        if (handle.prometheusEndpoint) scraped = await (await fetch(handle.prometheusEndpoint)).text();
        await shutdownTelemetry();
        console.log(JSON.stringify({ exporting: handle.metricsExporting, scraped }));`;
        const base = { ...process.env, NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_OBSERVER: '0' };
        const prometheus = await run(process.execPath, ['--input-type=module', '-e', script], {
          cwd: project,
          env: { ...base, NEMO_GYM_OTEL_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: '0' },
        });
        const scrape = JSON.parse(prometheus.stdout) as { exporting: boolean; scraped: string };
        expect(scrape.exporting).toBe(true);
        expect(scrape.scraped).toMatch(/^gym_test_packed_total(\{[^}]*\})? 3$/m);
        expect(prometheus.stderr).toBe('');

        const otlp = await run(process.execPath, ['--input-type=module', '-e', script], {
          cwd: project,
          env: { ...base, NEMO_GYM_OTEL_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: url },
        });
        expect(JSON.parse(otlp.stdout)).toMatchObject({ exporting: true });
        const metrics = receiver.requests.filter((request) => request.path === '/v1/metrics');
        expect(metrics).toHaveLength(1);
        const exported = decodeOtlpMetrics((metrics[0] as { body: Buffer }).body)
          .flatMap((block) => block.scopes.flatMap((scope) => scope.items))
          .find((metric) => metric.name === 'gym.test.packed');
        expect(exported?.points[0]?.value).toBe(3);
      } finally {
        await receiver.close();
      }
    }, 300_000);

    it('beside a newer 3.x SDK of your own: your copies on top, one API, the pinned set nested (two versions at most)', async () => {
      // The exporters (0.x) pin the SDK release they were made with, exactly, and the bootstrap
      // pins the same set. A user's newer SDK takes the top level; npm then nests the pinned
      // release under each package that pins it (see the README's Compatibility section).
      const pinned = byName.get(name)?.manifest.dependencies?.['@opentelemetry/sdk-metrics'] as string;
      expect(pinned).toMatch(/^3\.\d+\.\d+$/);
      const project = emptyProject(work);
      await install(project, [...bootstrapSpecs(), '@opentelemetry/api@^1.10.0', ...SDK.map((pkg) => `${pkg}@^3`)]);
      const copies = installedCopies(project);
      expect(copies.get('@opentelemetry/api')?.map((copy) => copy.path)).toEqual(['node_modules/@opentelemetry/api']);
      for (const pkg of SDK) {
        const found = copies.get(pkg) ?? [];
        const top = found.find((copy) => copy.path === `node_modules/${pkg}`);
        expect(top?.version).toMatch(/^3\./);
        expect(new Set(found.map((copy) => copy.version)).size).toBeLessThanOrEqual(2);
        for (const copy of found) if (copy !== top) expect(copy.version).toBe(pinned);
      }
    }, 300_000);
  },
);
