// The top-level README's "instrument your server" example compiles against the packages'
// real types (strict, like the packages), so it cannot drift from their APIs. It is checked
// outside the repository with the workspace packages mapped to their sources.

import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from '@jest/globals';
import { publishablePackages } from './support/pack.js';
import { tsBlocks } from './support/readme-examples.js';

const run = promisify(execFile);
const repo = new URL('..', import.meta.url).pathname;
const require = createRequire(import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'gym-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const readme = readFileSync(join(repo, 'README.md'), 'utf8');
const example = /## Instrument your server\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

it('the README keeps its two commands first, and asks for nothing but Node and npm', () => {
  expect(readme.indexOf('```sh\nnpm ci && npm run demo\n```')).toBeGreaterThan(0);
  expect(readme.indexOf('```sh\nnpm ci && npm test\n```')).toBeGreaterThan(0);
  expect(readme.indexOf('npm ci && npm test')).toBeLessThan(readme.indexOf('## '));
  // protoc is gone; Prometheus is optional and installable from apt or Homebrew.
  for (const doc of [readme, readFileSync(join(repo, 'CONTRIBUTING.md'), 'utf8')]) expect(doc).not.toMatch(/protoc/);
  expect(readme).toContain('`apt-get install prometheus`');
  expect(readme).toContain('`brew install prometheus`');
});

/** The one sentence every README says about Node 20, word for word. */
const NODE_20 =
  '**Node 20:** the libraries (every package but `@gym/otel-bootstrap`) run on Node.js 20.19 or newer; ' +
  '`@gym/otel-bootstrap` 1.x needs Node.js 22.15 or newer (it builds with OpenTelemetry JS 3.x), so on Node 20 ' +
  'set up your OpenTelemetry JS 2.x SDK yourself and the libraries record into it.';

it('the top-level README says the Node 20 sentence, and describes no other bootstrap line', () => {
  expect(readme).toContain(NODE_20);
  expect(readme).not.toMatch(/0\.x line|otel-bootstrap@0|npm pack/);
});

describe.each(publishablePackages().map((pkg) => [pkg.manifest.name, pkg] as const))('%s README', (name, pkg) => {
  const text = readFileSync(join(pkg.dir, 'README.md'), 'utf8');

  it('installs it from the registry by name (with its peer @opentelemetry/api), not from tarballs of a clone', () => {
    const peer = pkg.manifest.peerDependencies?.['@opentelemetry/api'] ? ' @opentelemetry/api' : '';
    expect(text).toMatch(new RegExp(`^npm install (--save-dev )?${name}${peer}$`, 'm'));
    expect(text).not.toMatch(/npm pack|\.tgz/);
  });

  it('says the Node 20 sentence in its Compatibility section, and describes no other bootstrap line', () => {
    const compatibility = /^## Compatibility\n([\s\S]*?)(^## |$(?![\s\S]))/m.exec(text)?.[1] ?? '';
    expect(compatibility).toContain(NODE_20);
    expect(text).not.toMatch(/0\.x line|otel-bootstrap@0/);
  });
});

it('the "instrument your server" example type-checks against the packages', async () => {
  expect(example).toContain('resourcesOperation');
  // The example's own helpers (the user's code) are declared; everything else is real.
  const source = `declare type Task = { id: string };
declare function runVerifier(task: Task, signal?: AbortSignal): Promise<boolean>;
${example}`;
  writeFileSync(join(dir, 'example.mts'), source);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: join(repo, 'tsconfig.base.json'),
      compilerOptions: {
        noEmit: true,
        composite: false,
        declaration: false,
        rootDir: '/',
        typeRoots: [join(repo, 'node_modules', '@types')],
        paths: {
          '@gym/*': [join(repo, 'packages', '*', 'src', 'index.ts')],
          'async-mutex': [join(repo, 'node_modules', 'async-mutex', 'lib', 'index.d.ts')],
        },
      },
      files: ['example.mts'],
    }),
  );
  const tsc = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
  const result = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')]).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  expect(result).toBe('');
}, 120_000);

it('every TypeScript example of every README is one test/release.test.ts checks (no other README has one, and none is fenced otherwise)', () => {
  const readmes = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '*README.md'], {
    cwd: repo,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);
  const checked = new Set([
    'README.md',
    ...publishablePackages().map((pkg) => `${pkg.dir.slice(repo.length)}/README.md`),
  ]);
  expect(readmes).toEqual(expect.arrayContaining([...checked]));
  for (const file of readmes) {
    const text = readFileSync(join(repo, file), 'utf8');
    // TypeScript or JavaScript fenced under another name would escape the extraction.
    expect({ file, fences: text.match(/^```(typescript|tsx|mts|cts|js|javascript|mjs|cjs)$/gm) }).toEqual({
      file,
      fences: null,
    });
    if (!checked.has(file)) expect({ file, blocks: tsBlocks(file).length }).toEqual({ file, blocks: 0 });
    else expect({ file, blocks: tsBlocks(file).length > 0 }).toEqual({ file, blocks: true });
  }
});
