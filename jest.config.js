// One jest run for the whole monorepo, in native ESM mode (the packages are ESM and
// p-limit 7 is ESM-only). TypeScript is stripped by @swc/jest; types are checked by
// `npm run typecheck`. Tests import sibling packages by name and get their sources.
//
// Two OpenTelemetry lines: the root devDependencies hold the 3.x SDK (API 1.10, Node ≥ 22.15),
// the private workspace test/otel2 holds the 2.x SDK (API 1.9). On a Node that cannot run 3.x
// (Node 20, the libraries' oldest supported runtime), every @opentelemetry/* import, the SDK's
// own included, is mapped to the 2.x copy, and scripts/run-jest.mjs runs the libraries' suites
// only. packages/test-kit/test/sdk-line.test.ts proves which SDK each run really loaded.
//
// The libraries as users get them: when GYM_PACKED_DIR names an install of the packed tarballs
// (scripts/packed.mjs; scripts/run-jest.mjs makes it for a whole run), a second project,
// `packed`, runs the defect suites of @gym/operations again with @gym/* and @opentelemetry/*
// resolved from that install. test/packed/ proves which copy it loaded.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OTEL_PACKAGES, PACKED_LIBRARIES as PACKED, withDependencies } from './scripts/packed.mjs';

const packages = readdirSync(new URL('./packages/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
/** OpenTelemetry JS 3.x needs Node 22.15 or newer. */
export const otelLine = major > 22 || (major === 22 && minor >= 15) ? 3 : 2;

/** The suites the `packed` project runs over the installed tarballs. */
export const PACKED_SUITES = [
  'packages/operations/test/defects.test.ts',
  'packages/operations/test/kinds.test.ts',
  'packages/operations/test/randomized.test.ts',
  'packages/operations/test/two-copies.test.ts',
  'packages/operations/test/unreferenced.test.ts',
  'packages/operations/test/unreferenced-gc.test.ts',
  'packages/operations/test/wrong-shaped-slot.test.ts',
  'test/packed/packed-copy.test.ts',
];

const rootDir = new URL('.', import.meta.url).pathname;
const esm = {
  rootDir,
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'es6' },
      },
    ],
  },
};
const relativeJs = { '^(\\.{1,2}/.*)\\.js$': '$1' };

/** @type {import('jest').Config} */
const workspace = {
  ...esm,
  roots: ['<rootDir>/packages', '<rootDir>/apps', '<rootDir>/test'],
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '<rootDir>/test/packed/'],
  moduleNameMapper: {
    [`^@gym/(${packages.join('|')})$`]: '<rootDir>/packages/$1/src/index.ts',
    '^@gym/core/internal$': '<rootDir>/packages/core/src/internal.ts',
    '^@gym/dashboards/internal$': '<rootDir>/packages/dashboards/src/internal.ts',
    ...(otelLine === 2
      ? { [`^@opentelemetry/(${OTEL_PACKAGES.join('|')})$`]: '<rootDir>/test/otel2/node_modules/@opentelemetry/$1' }
      : {}),
    ...relativeJs,
  },
};

/**
 * `@gym/<name>` and its subpaths → the installed file that package's `exports` gives `import`
 * (PACKED_LIBRARIES and their dependencies); `@opentelemetry/<name>` → the installed package.
 * The test kit stays the workspace's source.
 */
function packedProject(dir) {
  const installed = join(dir, 'node_modules');
  const gym = {};
  for (const folder of withDependencies(PACKED)) {
    const name = `@gym/${folder}`;
    const { exports } = JSON.parse(readFileSync(join(installed, name, 'package.json'), 'utf8'));
    for (const [subpath, target] of Object.entries(exports)) {
      const file = target?.import?.default;
      if (typeof file === 'string')
        gym[`^${join(name, subpath).replace(/[/.]/g, '\\$&')}$`] = join(installed, name, file);
    }
  }
  /** @type {import('jest').Config} */
  return {
    ...esm,
    displayName: 'packed',
    roots: ['<rootDir>/packages/operations/test', '<rootDir>/test/packed'],
    testMatch: PACKED_SUITES.map((suite) => `<rootDir>/${suite}`),
    globals: { GYM_PACKED_DIR: dir },
    moduleNameMapper: {
      ...gym,
      '^@gym/test-kit$': '<rootDir>/packages/test-kit/src/index.ts',
      // Any other library fails to resolve, loudly, rather than load a workspace copy beside these.
      '^@gym/(.*)$': `${dir}/not-in-PACKED_LIBRARIES/@gym/$1`,
      [`^@opentelemetry/(${OTEL_PACKAGES.join('|')})$`]: `${installed}/@opentelemetry/$1`,
      ...relativeJs,
    },
  };
}

const packed = process.env.GYM_PACKED_DIR;
/** @type {import('jest').Config} */
export default {
  testTimeout: 30000,
  ...(packed ? { projects: [{ ...workspace, displayName: 'workspace' }, packedProject(packed)] } : workspace),
};
