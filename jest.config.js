// One jest run for the whole monorepo, in native ESM mode (the packages are ESM and
// p-limit 7 is ESM-only). TypeScript is stripped by @swc/jest; types are checked by
// `npm run typecheck`. Tests import sibling packages by name and get their sources.
//
// Two OpenTelemetry lines: the root devDependencies hold the 3.x SDK (API 1.10, Node ≥ 22.15),
// the private workspace test/otel2 holds the 2.x SDK (API 1.9). On a Node that cannot run 3.x
// (Node 20, the libraries' oldest supported runtime), every @opentelemetry/* import, the SDK's
// own included, is mapped to the 2.x copy, and scripts/run-jest.mjs runs the libraries' suites
// only. packages/test-kit/test/sdk-line.test.ts proves which SDK each run really loaded.
import { readdirSync } from 'node:fs';

const packages = readdirSync(new URL('./packages/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
/** OpenTelemetry JS 3.x needs Node 22.15 or newer. */
export const otelLine = major > 22 || (major === 22 && minor >= 15) ? 3 : 2;
const OTEL2 = ['api', 'context-async-hooks', 'core', 'exporter-prometheus', 'resources', 'sdk-metrics', 'sdk-trace'];

/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/apps', '<rootDir>/test'],
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
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
  moduleNameMapper: {
    [`^@gym/(${packages.join('|')})$`]: '<rootDir>/packages/$1/src/index.ts',
    '^@gym/core/internal$': '<rootDir>/packages/core/src/internal.ts',
    '^@gym/dashboards/internal$': '<rootDir>/packages/dashboards/src/internal.ts',
    ...(otelLine === 2
      ? { [`^@opentelemetry/(${OTEL2.join('|')})$`]: '<rootDir>/test/otel2/node_modules/@opentelemetry/$1' }
      : {}),
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testTimeout: 30000,
};
