// The `packed` jest project (jest.config.js) runs the defect suites of @gym/operations over the
// libraries as users get them: `npm pack` tarballs installed into a project outside the
// repository (scripts/packed.mjs). This suite runs in that project only and proves the mapping:
// every @gym/* library, the test kit's REPO_ROOT and the OpenTelemetry SDK of this run's line
// come from that install, and the @gym/* packages there were installed from tarballs.

import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMetricHarness, REPO_ROOT } from '@gym/test-kit';
import { expect, it } from '@jest/globals';

const dir = (globalThis as { GYM_PACKED_DIR?: string }).GYM_PACKED_DIR as string;
const installed = join(dir, 'node_modules');
const repo = realpathSync(fileURLToPath(new URL('../../', import.meta.url)));
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const line = major > 22 || (major === 22 && minor >= 15) ? 3 : 2;
const LIBRARIES = ['constants', 'core', 'operations', 'metrics'];

const within = (path: string, folder: string) => realpathSync(path).startsWith(realpathSync(folder) + sep);

it('the install is outside the repository', () => {
  expect(typeof dir).toBe('string');
  expect(within(dir, repo)).toBe(false);
  expect(realpathSync(dir).startsWith(repo)).toBe(false);
});

it.each(LIBRARIES)('@gym/%s resolves to the installed tarball, and that module is the one loaded', async (name) => {
  const resolved = fileURLToPath(import.meta.resolve(`@gym/${name}`));
  expect(within(resolved, join(installed, '@gym', name))).toBe(true);
  expect(resolved.endsWith(join('dist', 'index.js'))).toBe(true);
  // A real folder of the install, not a link back into the workspace.
  expect(lstatSync(join(installed, '@gym', name)).isSymbolicLink()).toBe(false);
  const lock = JSON.parse(readFileSync(join(installed, '.package-lock.json'), 'utf8')) as {
    packages: Record<string, { resolved?: string }>;
  };
  expect(lock.packages[`node_modules/@gym/${name}`]?.resolved).toMatch(/^file:tarballs\/gym-[a-z-]+-[\d.]+\.tgz$/);
  const byName = (await import(`@gym/${name}`)) as Record<string, unknown>;
  const byPath = (await import(resolved)) as Record<string, unknown>;
  expect(Object.keys(byName).length).toBeGreaterThan(0);
  for (const key of Object.keys(byName)) expect(byName[key]).toBe(byPath[key]);
});

it(`the OpenTelemetry SDK is the install's ${line}.x line`, async () => {
  for (const pkg of ['api', 'sdk-metrics', 'sdk-trace', 'context-async-hooks']) {
    expect(within(fileURLToPath(import.meta.resolve(`@opentelemetry/${pkg}`)), installed)).toBe(true);
  }
  const { reader, meterProvider, shutdown } = createMetricHarness();
  meterProvider.getMeter('packed').createCounter('packed').add(1);
  const { resourceMetrics } = await reader.collect();
  expect(String(resourceMetrics.resource.attributes['telemetry.sdk.version'])).toMatch(new RegExp(`^${line}\\.`));
  await shutdown();
});

it('the test kit copies built packages from the install (REPO_ROOT is its repository-shaped view)', () => {
  expect(REPO_ROOT).toBe(`${join(dir, 'repo')}/`);
  for (const name of LIBRARIES) {
    expect(realpathSync(join(REPO_ROOT, 'packages', name))).toBe(realpathSync(join(installed, '@gym', name)));
  }
  expect(realpathSync(join(REPO_ROOT, 'node_modules'))).toBe(realpathSync(installed));
});

it('a library that is not packed does not resolve, so no workspace copy loads beside the packed ones', () => {
  // @gym/observer is not among the packed libraries (scripts/packed.mjs PACKED_LIBRARIES).
  expect(() => import.meta.resolve('@gym/observer')).toThrow(/not-in-PACKED_LIBRARIES/);
});
