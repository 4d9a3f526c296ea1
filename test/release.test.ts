// A release, end to end, as users get it: a copy of this repository publishes every package to
// a real npm registry (Verdaccio on 127.0.0.1, throwaway storage and config; `@gym/*` served
// only there) with `changeset publish`, as a release would. Then, for each package, a fresh
// project installs ONLY that package by name, beside the user's @opentelemetry/api (1.9 for
// the libraries on Node 20, 1.10 for the bootstrap on Node 24), with no warning; every
// TypeScript block of its README is type-checked there (strict ES module, and CommonJS with
// `module: node16`, no `skipLibCheck`) and run where it can run. A project with every package
// type-checks an import of each as CommonJS and as ESM. Last, a patch changeset to @gym/core,
// `changeset version` and `changeset publish` again: only @gym/core gets a new version, and
// `npm update` in an existing user's project moves only that piece.
//
// Verdaccio is not a dependency: `node scripts/verdaccio.mjs` installs it into a cache (.ci/run
// does). Without it this file is skipped, saying so; GYM_REQUIRE_TOOLS=1 makes that a failure.

import { execFile, execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { findOnPath } from '@gym/test-kit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
// @ts-expect-error: a plain ES module of the repository's scripts, without types
import { findVerdaccio, startVerdaccio } from '../scripts/verdaccio.mjs';
import { closure, emptyProject, installedCopies, publishablePackages, repo } from './support/pack.js';
import { examples, packageOf } from './support/readme-examples.js';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const tsc = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
const changeset = join(repo, 'node_modules', '@changesets', 'cli', 'bin.js');
const rootManifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};

const publishable = publishablePackages();
const byName = new Map(publishable.map((pkg) => [pkg.manifest.name, pkg]));
const BOOTSTRAP = '@gym/otel-bootstrap';

const verdaccio = findVerdaccio() as string | undefined;
const required = process.env.GYM_REQUIRE_TOOLS === '1';
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const node24 = major > 22 || (major === 22 && minor >= 15);

/** The machine's Node 20 (first on PATH outside node_modules/.bin), else this Node. */
function findNode20(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir.includes('node_modules')) continue;
    const node = findOnPath('node', dir);
    if (node && execFileSync(node, ['--version'], { encoding: 'utf8' }).startsWith('v20.')) return node;
  }
  return process.execPath;
}

/** npm's own CLI script, to run npm on a chosen Node (its engine checks judge that Node). */
function npmCli(): string {
  const npm = findOnPath('npm');
  if (!npm) throw new Error('npm is not on PATH');
  return realpathSync(npm);
}

/** This process's environment without npm's script variables, telemetry settings or GYM_* flags. */
function cleanEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(npm_|NEMO_GYM_|NEMO_LENS_|OTEL_|NODE_OPTIONS$|INIT_CWD$)/i.test(name),
    ),
  );
  return { ...env, ...extra };
}

const describeRelease =
  verdaccio && node24
    ? describe
    : required && node24
      ? (title: string) => describe(title, () => it('finds Verdaccio', () => expect(verdaccio).toBeDefined()))
      : describe.skip;
const why = !node24
  ? '[skipped: needs Node >= 22.15, as npm test runs]'
  : verdaccio
    ? ''
    : '[skipped: Verdaccio is not installed; node scripts/verdaccio.mjs installs it into the cache]';

describeRelease(`a release through a real registry ${why}`.trim(), () => {
  const work = mkdtempSync(join(tmpdir(), 'gym-release-'));
  const copy = join(work, 'repo');
  const node20 = findNode20();
  const npm = npmCli();
  let registry: { url: string; token: string; stop(): Promise<void>; output(): string } | undefined;
  let userConfig = '';
  let publishEnv: NodeJS.ProcessEnv = {};
  /** Projects by package, kept for the update step. */
  const projects = new Map<string, string>();

  const npmOn = (node: string, cwd: string, args: string[], env = cleanEnv({ npm_config_userconfig: userConfig })) =>
    run(node, [npm, ...args], { cwd, env, maxBuffer: 64 * 1024 * 1024 });

  const versionsOf = async (name: string): Promise<string[]> => {
    const { stdout } = await npmOn(process.execPath, work, ['view', name, 'versions', '--json', '--prefer-online']);
    const parsed = JSON.parse(stdout) as string | string[];
    return Array.isArray(parsed) ? parsed : [parsed];
  };

  beforeAll(async () => {
    // The repository as committed plus what is new, with the built packages, in a git repository
    // of its own (`changeset version` edits it; `changeset publish` tags it).
    const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: repo, encoding: 'utf8' })
      .split('\0')
      .filter((file) => file !== '' && existsSync(join(repo, file)));
    for (const file of files) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      cpSync(join(repo, file), join(copy, file));
    }
    for (const { dir } of publishable) {
      cpSync(join(dir, 'dist'), join(copy, dir.slice(repo.length), 'dist'), { recursive: true });
    }
    symlinkSync(join(repo, 'node_modules'), join(copy, 'node_modules'));
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=release', '-c', 'user.email=release@example.invalid', ...args], {
        cwd: copy,
      });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-q', '-m', 'the release');

    const started: NonNullable<typeof registry> = await startVerdaccio(join(work, 'registry'));
    registry = started;
    const host = started.url.replace(/^http:/, '');
    userConfig = join(work, 'npmrc');
    // A user's npm: @gym/* from the release registry, everything else from the npm registry.
    writeFileSync(userConfig, `@gym:registry=${started.url}\n${host}:_authToken=${started.token}\n`);
    publishEnv = cleanEnv({ npm_config_userconfig: userConfig, npm_config_registry: started.url });
    await run(process.execPath, [changeset, 'publish'], { cwd: copy, env: publishEnv, maxBuffer: 64 * 1024 * 1024 });
  }, 600_000);

  afterAll(async () => {
    await registry?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('publishes every package at its version, and nothing private', async () => {
    for (const { manifest } of publishable) expect(await versionsOf(manifest.name)).toEqual([manifest.version]);
    for (const internal of ['@gym/test-kit', '@gym/demo', '@gym/otel2']) {
      await expect(versionsOf(internal)).rejects.toThrow(/E404|404/);
    }
  }, 120_000);

  describe.each(publishable.map((pkg) => pkg.manifest.name))('%s', (name) => {
    const bootstrap = name === BOOTSTRAP;
    const readme = `packages/${name.slice('@gym/'.length)}/README.md`;
    const blocks = examples(readme);

    it(`installs alone by name beside the user's @opentelemetry/api (${bootstrap ? '1.10 on Node 24' : '1.9 on Node 20'}), with no warning`, async () => {
      const node = bootstrap ? process.execPath : node20;
      expect(execFileSync(node, ['--version'], { encoding: 'utf8' })).toMatch(bootstrap ? /^v2[2-9]\./ : /^v20\./);
      const project = emptyProject(work);
      projects.set(name, project);
      // What the README's examples import besides the package: the user's own libraries.
      const theirs = [...new Set(blocks.flatMap((example) => example.imports).map(packageOf))].filter(
        (pkg) => !pkg.startsWith('@gym/') && pkg !== '@opentelemetry/api',
      );
      const specs = [
        name,
        `@opentelemetry/api@${bootstrap ? '~1.10.0' : '~1.9.0'}`,
        ...theirs.map((pkg) => `${pkg}@${rootManifest.devDependencies[pkg] ?? 'latest'}`),
      ];
      const { stderr } = await npmOn(node, project, [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        ...specs,
      ]);
      expect(stderr.split('\n').filter((line) => /warn/i.test(line))).toEqual([]);
      const gym = [...installedCopies(project)].filter(([pkg]) => pkg.startsWith('@gym/'));
      expect(gym.map(([pkg]) => pkg).sort()).toEqual([...closure(name, byName)].sort());
      for (const [pkg, copies] of gym) {
        expect(copies.map((copy) => copy.version)).toEqual([byName.get(pkg)?.manifest.version]);
      }
    }, 300_000);

    it(`type-checks every example of its README as ESM and as CommonJS (node16, strict, no skipLibCheck), and runs those that can run`, async () => {
      const project = projects.get(name) as string;
      expect(blocks.length).toBeGreaterThan(0);
      const names = blocks.map((_, index) => `example-${index + 1}`);
      blocks.forEach((example, index) => {
        writeFileSync(join(project, `${names[index]}.mts`), example.esm);
        writeFileSync(join(project, `${names[index]}.cts`), example.cjs);
      });
      const base = {
        module: 'node16',
        target: 'es2022',
        strict: true,
        types: ['node'],
        typeRoots: [join(repo, 'node_modules', '@types')],
      };
      writeFileSync(
        join(project, 'tsconfig.esm.json'),
        JSON.stringify({ compilerOptions: { ...base, outDir: 'out' }, files: names.map((file) => `${file}.mts`) }),
      );
      writeFileSync(
        join(project, 'tsconfig.cjs.json'),
        JSON.stringify({ compilerOptions: { ...base, noEmit: true }, files: names.map((file) => `${file}.cts`) }),
      );
      const check = (config: string) =>
        run(process.execPath, [tsc, '-p', config], { cwd: project }).then(
          () => '',
          (error: { stdout?: string }) => error.stdout ?? String(error),
        );
      expect(await check('tsconfig.esm.json')).toBe('');
      expect(await check('tsconfig.cjs.json')).toBe('');

      const node = bootstrap ? process.execPath : node20;
      const ran: string[] = [];
      for (const [index, example] of blocks.entries()) {
        if (example.notRun !== undefined) continue;
        const result = await run(node, [join(project, 'out', `${names[index]}.mjs`)], {
          cwd: project,
          env: cleanEnv({}),
          timeout: 60_000,
        }).then(
          ({ stderr }) => ({ code: 0, stderr }),
          (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr }),
        );
        expect({ example: example.id, ...result }).toEqual({ example: example.id, code: 0, stderr: '' });
        ran.push(example.id);
      }
      // Each README has at least one example that runs, except those whose every example needs
      // the world (a server on a fixed port, a judge on the network).
      if (!['@gym/observer', '@gym/http-pool'].includes(name)) expect(ran.length).toBeGreaterThan(0);
    }, 300_000);
  });

  it('every package in one CommonJS and one ESM project (node16, strict, no skipLibCheck), and the top-level README example', async () => {
    const project = emptyProject(work);
    const specs = [...publishable.map((pkg) => pkg.manifest.name), '@opentelemetry/api@~1.10.0', 'async-mutex@^0.5.0'];
    await npmOn(process.execPath, project, ['install', '--no-audit', '--no-fund', '--prefer-offline', ...specs]);
    const imports = publishable
      .map(({ manifest }, index) => `import * as p${index} from '${manifest.name}';`)
      .join('\n');
    const all = `export const all = [${publishable.map((_, index) => `p${index}`).join(', ')}];\n`;
    writeFileSync(join(project, 'every.cts'), `${imports}\n${all}`);
    writeFileSync(join(project, 'every.mts'), `${imports}\n${all}`);
    const [top] = examples('README.md');
    writeFileSync(join(project, 'readme.mts'), top?.esm ?? '');
    writeFileSync(join(project, 'readme.cts'), top?.cjs ?? '');
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'node16',
          target: 'es2022',
          strict: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [join(repo, 'node_modules', '@types')],
        },
        files: ['every.cts', 'every.mts', 'readme.mts', 'readme.cts'],
      }),
    );
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(result).toBe('');
    // The CommonJS file really takes the require() path: each package's .d.cts.
    const traced = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--traceResolution'], {
      cwd: project,
      maxBuffer: 256 * 1024 * 1024,
    });
    for (const { manifest } of publishable) {
      expect(traced.stdout).toMatch(
        new RegExp(`Module name '${manifest.name}' was successfully resolved to '[^']*/dist/index\\.d\\.cts'`),
      );
    }
  }, 300_000);

  it("a patch to @gym/core releases only @gym/core, and an existing user's `npm update` moves only that piece", async () => {
    const target = '@gym/core';
    const before = new Map<string, string[]>();
    for (const { manifest } of publishable) before.set(manifest.name, await versionsOf(manifest.name));
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=release', '-c', 'user.email=release@example.invalid', ...args], {
        cwd: copy,
        encoding: 'utf8',
      });
    // Only this change is pending (whatever else the repository has pending is not this release).
    const pending = execFileSync('git', ['ls-files', '.changeset/*.md'], { cwd: copy, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file !== '' && !file.endsWith('README.md'));
    if (pending.length > 0) git('rm', '-q', ...pending);
    writeFileSync(join(copy, '.changeset', 'release-test-core.md'), `---\n"${target}": patch\n---\n\nA fix.\n`);
    // The repository's own script: `changeset version`, then the lockfile follows.
    await run(process.execPath, [npm, 'run', 'version-packages'], { cwd: copy, env: publishEnv });
    const changed = git('status', '--porcelain')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3));
    // The private demo's range on @gym/core follows too (updateInternalDependencies); it is never published.
    for (const file of changed.filter((each) => each.startsWith('apps/'))) {
      expect({
        file,
        private: (JSON.parse(readFileSync(join(copy, file), 'utf8')) as { private?: boolean }).private,
      }).toEqual({
        file: expect.stringMatching(/^apps\/[^/]+\/package\.json$/),
        private: true,
      });
    }
    expect(changed.filter((file) => !file.startsWith('.changeset/') && !file.startsWith('apps/')).sort()).toEqual([
      'package-lock.json',
      'packages/core/CHANGELOG.md',
      'packages/core/package.json',
    ]);
    const patched = (JSON.parse(readFileSync(join(copy, 'packages/core/package.json'), 'utf8')) as { version: string })
      .version;
    const lock = JSON.parse(readFileSync(join(copy, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    expect(lock.packages['packages/core']?.version).toBe(patched);
    git('add', '-A');
    git('commit', '-q', '-m', 'a patch');
    await run(process.execPath, [changeset, 'publish'], { cwd: copy, env: publishEnv, maxBuffer: 64 * 1024 * 1024 });
    for (const { manifest } of publishable) {
      const now = await versionsOf(manifest.name);
      expect({ name: manifest.name, versions: now }).toEqual({
        name: manifest.name,
        versions: manifest.name === target ? [...(before.get(target) ?? []), patched] : before.get(manifest.name),
      });
    }

    // A user of @gym/metrics (which depends on @gym/core and @gym/constants) updates.
    const project = projects.get('@gym/metrics') as string;
    const versions = () =>
      new Map([...installedCopies(project)].map(([pkg, copies]) => [pkg, copies.map((copy) => copy.version)]));
    const old = versions();
    const { stderr } = await npmOn(node20, project, ['update', '--no-audit', '--no-fund', '--prefer-online']);
    expect(stderr.split('\n').filter((line) => /warn/i.test(line))).toEqual([]);
    const now = versions();
    for (const [pkg, copies] of old) {
      expect({ pkg, copies: now.get(pkg) }).toEqual({ pkg, copies: pkg === target ? [patched] : copies });
    }
  }, 600_000);
});
