// Rules of the repository that no single package can check for itself. Import rules (no SDK
// in a library, declared dependencies only, no import cycles, no `export *`, no console
// output from a library) are the linter's: biome.json and lint/*.grit, proven by
// test/lint-rules.test.ts. What stays here is about manifests, files
// and the lockfile, which a linter does not read.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const repo = new URL('..', import.meta.url).pathname;

interface Manifest {
  name: string;
  homepage?: string;
  bugs?: { url?: string };
  repository?: { type?: string; url?: string; directory?: string };
  scripts?: Record<string, string>;
  private?: boolean;
  type?: string;
  sideEffects?: boolean;
  files?: string[];
  exports?: Record<string, unknown>;
  typesVersions?: Record<string, Record<string, string[]>>;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const packages = readdirSync(join(repo, 'packages'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(repo, 'packages', entry.name, 'package.json')))
  .map((entry) => {
    const dir = join(repo, 'packages', entry.name);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    return { name: entry.name, dir, manifest };
  });
const publishable = packages.filter((pkg) => pkg.manifest.private !== true);

/** Whether a package depends on the OpenTelemetry JS 3.x SDK (Node 22.15+, API 1.10). */
function carriesSdk3(manifest: Manifest): boolean {
  return Object.entries(manifest.dependencies ?? {}).some(
    ([dep, range]) => dep.startsWith('@opentelemetry/sdk-') && /^\^?3\./.test(range),
  );
}

it('finds the packages (the checks below are not vacuous)', () => {
  expect(publishable.map((pkg) => pkg.name)).toEqual(
    expect.arrayContaining(['constants', 'core', 'operations', 'metrics', 'sandbox-telemetry', 'otel-bootstrap']),
  );
});

describe.each(publishable.map((pkg) => [pkg.name, pkg] as const))('packages/%s (published)', (_name, pkg) => {
  it('is packaged as the monorepo expects (ESM with a require() entry, types first, dist only, no side effects)', () => {
    const { manifest } = pkg;
    expect(manifest.type).toBe('module');
    expect(manifest.sideEffects).toBe(false);
    expect(manifest.files).toEqual(['dist', '!dist/.tsbuildinfo']);
    // `import` gets the ESM build; `require` gets dist/index.cjs, which require()s that same
    // ESM build (Node 20.19+), with CommonJS types: what @arethetypeswrong/cli accepts
    // (test/pack-install.test.ts runs it on every tarball).
    expect(JSON.stringify(manifest.exports?.['.'])).toBe(
      JSON.stringify({
        import: { types: './dist/index.d.ts', default: './dist/index.js' },
        require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
      }),
    );
    expect(manifest.scripts?.build).toMatch(/^tsc -b && node \.\.\/\.\.\/scripts\/cjs-entry\.mjs( && |$)/);
    expect(manifest.exports?.['./package.json']).toBe('./package.json');
    // A code subpath entry (`@gym/core/internal`) has the same shape under its own name (a
    // string target, such as dashboards' generated files, is data and no module).
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (subpath === '.' || typeof target === 'string') continue;
      const entry = /^\.\/([\w-]+)$/.exec(subpath)?.[1];
      expect(JSON.stringify(target)).toBe(
        JSON.stringify({
          import: { types: `./dist/${entry}.d.ts`, default: `./dist/${entry}.js` },
          require: { types: `./dist/${entry}.d.cts`, default: `./dist/${entry}.cjs` },
        }),
      );
      // TypeScript's node10 resolution reads no `exports`: `typesVersions` points it at the types.
      expect(manifest.typesVersions?.['*']?.[entry as string]).toEqual([`./dist/${entry}.d.ts`]);
    }
    // Node 20.19 (require() of ESM), or 22.15 for a package that carries the 3.x SDK (its floor).
    const sdk3 = carriesSdk3(manifest);
    expect(manifest.engines?.node).toBe(sdk3 ? '>=22.15' : '>=20.19');
    for (const [dep, range] of Object.entries(manifest.dependencies ?? {})) {
      if (dep.startsWith('@gym/')) expect(`${dep}@${range}`).toMatch(/@\^\d+\.\d+\.\d+$/);
    }
  });

  it('takes @opentelemetry/api as a peer, never as a dependency of its own (^1.9.0 unless it carries the 3.x SDK)', () => {
    const { manifest } = pkg;
    expect(manifest.dependencies?.['@opentelemetry/api']).toBeUndefined();
    const peer = manifest.peerDependencies?.['@opentelemetry/api'];
    // A library records into whatever SDK the user has (2.x with API 1.9, 3.x with 1.10); a
    // package that depends on the 3.x SDK needs the API that SDK accepts.
    const sdk3 = carriesSdk3(manifest);
    if (peer !== undefined) expect(peer).toBe(sdk3 ? '^1.10.0' : '^1.9.0');
  });

  it('depends on OpenTelemetry SDK packages as one consistent set (caret ranges, or one pinned release)', () => {
    // Stable packages (sdk-*, core, resources, …) take a caret range so they dedupe with a
    // user's own SDK, or all pin the one release the 0.x exporters pin (an exporter pins its
    // SDK exactly, so a caret would split the tree when a newer SDK patch appears). 0.x
    // packages (the exporters) are a caret range or an exact version of one release.
    const otel = Object.entries(pkg.manifest.dependencies ?? {}).filter(
      ([dep]) => dep.startsWith('@opentelemetry/') && dep !== '@opentelemetry/semantic-conventions',
    );
    const bad = otel
      .filter(([, range]) => !/^\^?[1-9]\d*\.\d+\.\d+$/.test(range) && !/^\^?0\.\d+\.\d+$/.test(range))
      .map(([dep, range]) => `${dep}@${range}`);
    expect(bad).toEqual([]);
    const stable = new Set(otel.filter(([, range]) => !/^\^?0\./.test(range)).map(([, range]) => range));
    const unstable = new Set(otel.filter(([, range]) => /^\^?0\./.test(range)).map(([, range]) => range));
    expect(stable.size).toBeLessThanOrEqual(1);
    expect(unstable.size).toBeLessThanOrEqual(1);
  });

  it("names its repository folder, homepage and issue tracker (the root manifest's repository)", () => {
    const root = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as Manifest;
    expect(root.repository?.url).toMatch(/^git\+https:\/\/github\.com\/[^/]+\/[^/]+\.git$/);
    const web = (root.repository?.url ?? '').replace(/^git\+/, '').replace(/\.git$/, '');
    expect(pkg.manifest.repository).toEqual({
      type: 'git',
      url: root.repository?.url,
      directory: `packages/${pkg.name}`,
    });
    expect(pkg.manifest.homepage).toBe(`${web}/tree/main/packages/${pkg.name}#readme`);
    expect(pkg.manifest.bugs).toEqual({ url: `${web}/issues` });
    expect(root.bugs).toEqual(pkg.manifest.bugs);
  });

  it('ships the repository LICENSE unchanged', () => {
    expect(readFileSync(join(pkg.dir, 'LICENSE'), 'utf8')).toBe(readFileSync(join(repo, 'LICENSE'), 'utf8'));
  });
});

it('the private test kit is private, and only tests and benchmarks use it', () => {
  const kit = packages.find((pkg) => pkg.manifest.name === '@gym/test-kit');
  expect(kit?.manifest.private).toBe(true);
  const users = publishable.filter(
    (pkg) =>
      pkg.manifest.dependencies?.['@gym/test-kit'] !== undefined ||
      pkg.manifest.peerDependencies?.['@gym/test-kit'] !== undefined,
  );
  expect(users.map((pkg) => pkg.name)).toEqual([]);
});

it('one copy of each OpenTelemetry package per major line in the lockfile: 3.x at the root, 2.x in test/otel2', () => {
  const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8'));
  // name@major → every folder that holds a copy of that line.
  const copies = new Map<string, string[]>();
  for (const [path, entry] of Object.entries<{ version?: string }>(lock.packages)) {
    const match = /node_modules\/(@opentelemetry\/[^/]+)$/.exec(path);
    if (match === null || entry.version === undefined) continue;
    // A line: the major version; a 0.x package's minor; the API's minor (1.9 goes with SDK 2.x, 1.10 with 3.x).
    const parts = entry.version.split('.');
    const major = parts[0] === '0' || match[1] === '@opentelemetry/api' ? parts.slice(0, 2).join('.') : parts[0];
    const key = `${match[1]}@${major}`;
    copies.set(key, [...(copies.get(key) ?? []), `${path} ${entry.version}`]);
  }
  expect(copies.size).toBeGreaterThan(6);
  // Two copies of one line would split the API globals or double the SDK.
  const duplicated = [...copies]
    .filter(([, found]) => found.length > 1)
    .map(([key, found]) => `${key}: ${found.join(', ')}`);
  expect(duplicated).toEqual([]);
  const version = (path: string) => lock.packages[path]?.version as string | undefined;
  expect(version('node_modules/@opentelemetry/api')).toMatch(/^1\.10\./);
  expect(version('node_modules/@opentelemetry/sdk-metrics')).toMatch(/^3\./);
  expect(version('test/otel2/node_modules/@opentelemetry/api')).toMatch(/^1\.9\./);
  expect(version('test/otel2/node_modules/@opentelemetry/sdk-metrics')).toMatch(/^2\./);
});

it("the packages whose engines leave out Node 20.19 are the 3.x SDK line and the bootstrap only (.npmrc's loglevel=error hides their warnings)", () => {
  // `npm ci` on Node 20 would print one EBADENGINE warning (5 lines) for each of them; .npmrc
  // keeps npm's warnings off instead, so this list is what that line may hide, and nothing else.
  // semver as npm reads engines (through @changesets/cli, a root devDependency, which depends on it).
  const fromChangesets = createRequire(createRequire(import.meta.url).resolve('@changesets/cli/package.json'));
  const semver = fromChangesets('semver') as { satisfies(version: string, range: string): boolean };
  const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8'));
  const excluded = Object.entries<{ engines?: { node?: string }; version?: string }>(lock.packages)
    .filter(([, entry]) => entry.engines?.node !== undefined && !semver.satisfies('20.19.0', entry.engines.node))
    .map(([path, entry]) => ({ path, version: entry.version ?? '' }));
  expect(excluded.length).toBeGreaterThan(0);
  for (const { path, version } of excluded) {
    const otel3 = /^node_modules\/@opentelemetry\/[^/]+$/.test(path) && /^(3\.|0\.[3-9]\d\d\.)/.test(version);
    expect({ path, allowed: otel3 || path === 'packages/otel-bootstrap' }).toEqual({ path, allowed: true });
  }
  expect(readFileSync(join(repo, '.npmrc'), 'utf8')).toMatch(/^loglevel=error$/m);
});

it('the lockfile agrees with every workspace manifest (versions and ranges), as `npm ci` requires', () => {
  // `changeset version` alone moves the manifests and leaves the lockfile behind, and `npm ci`
  // then refuses to install; `npm run version-packages` updates both.
  const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, Record<string, unknown>>;
  };
  const root = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { workspaces: string[] };
  const workspaces = Object.keys(lock.packages).filter((path) => path !== '' && !path.includes('node_modules/'));
  expect(workspaces.length).toBeGreaterThan(9);
  expect(workspaces.sort()).toEqual(
    root.workspaces
      .flatMap((pattern) =>
        pattern.endsWith('/*')
          ? readdirSync(join(repo, pattern.slice(0, -2)), { withFileTypes: true })
              .filter(
                (entry) =>
                  entry.isDirectory() && existsSync(join(repo, pattern.slice(0, -2), entry.name, 'package.json')),
              )
              .map((entry) => `${pattern.slice(0, -2)}/${entry.name}`)
          : [pattern],
      )
      .sort(),
  );
  const fields = ['version', 'dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'];
  for (const path of ['', ...workspaces]) {
    const manifest = JSON.parse(readFileSync(join(repo, path, 'package.json'), 'utf8')) as Record<string, unknown>;
    const pick = (entry: Record<string, unknown>) =>
      Object.fromEntries(fields.filter((field) => entry[field] !== undefined).map((field) => [field, entry[field]]));
    expect({ path, ...pick(lock.packages[path] ?? {}) }).toEqual({ path, ...pick(manifest) });
  }
  expect(
    (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts[
      'version-packages'
    ],
  ).toMatch(/^changeset version && npm install --package-lock-only /);
});

it('turbo.json runs only tasks some workspace implements, and every workspace builds and typechecks', () => {
  const turbo = JSON.parse(readFileSync(join(repo, 'turbo.json'), 'utf8')) as { tasks: Record<string, unknown> };
  const workspaces = [
    ...packages.map((pkg) => pkg.dir),
    ...readdirSync(join(repo, 'apps')).map((name) => join(repo, 'apps', name)),
  ].filter((dir) => existsSync(join(dir, 'package.json')));
  const scripts = workspaces.map(
    (dir) =>
      [dir.slice(repo.length), JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts ?? {}] as const,
  );
  const unimplemented = Object.keys(turbo.tasks).filter((task) => !scripts.some(([, s]) => task in s));
  expect(unimplemented).toEqual([]);
  const missing = scripts.flatMap(([dir, s]) =>
    ['build', 'typecheck'].filter((task) => !(task in s)).map((task) => `${dir}: ${task}`),
  );
  expect(missing).toEqual([]);
  // The tests are one root jest run, not a turbo task.
  expect(Object.keys(turbo.tasks)).not.toContain('test');
});

it('every changeset has frontmatter changesets can read, naming real packages', () => {
  const names = new Set(packages.map((pkg) => pkg.manifest.name));
  const dir = join(repo, '.changeset');
  // Right after a release none may be pending; the next test parses the README's example either way.
  const files = readdirSync(dir).filter((file) => file.endsWith('.md') && file !== 'README.md');
  const bad = files.flatMap((file) => {
    const match = /^---\n([\s\S]*?)^---$/m.exec(readFileSync(join(dir, file), 'utf8'));
    if (match === null || match.index !== 0) return [`${file}: no frontmatter`];
    return (match[1] as string)
      .split('\n')
      .filter((line) => line.trim() !== '')
      .filter((line) => {
        const release = /^"(@gym\/[a-z-]+)": (major|minor|patch)$/.exec(line);
        return release === null || !names.has(release[1] as string);
      })
      .map((line) => `${file}: ${line}`);
  });
  expect(bad).toEqual([]);
});

it('the example in .changeset/README.md and every changeset parse with the changesets parser', () => {
  const parse = createRequire(import.meta.url)('@changesets/parse').default as (text: string) => {
    releases: { name: string; type: string }[];
  };
  const readme = readFileSync(join(repo, '.changeset', 'README.md'), 'utf8');
  const example = /```text\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  expect(parse(example).releases).toEqual([{ name: '@gym/operations', type: 'minor' }]);
  const contributing = readFileSync(join(repo, 'CONTRIBUTING.md'), 'utf8');
  const second = /## Changesets[\s\S]*?```text\n([\s\S]*?)```/.exec(contributing)?.[1] ?? '';
  expect(parse(second).releases.length).toBeGreaterThan(0);
  // Every changeset parses (an empty one, releasing nothing, is allowed) and names real packages.
  const names = new Set(packages.map((pkg) => pkg.manifest.name));
  const dir = join(repo, '.changeset');
  const unknown = readdirSync(dir)
    .filter((name) => name.endsWith('.md') && name !== 'README.md')
    .flatMap((file) =>
      parse(readFileSync(join(dir, file), 'utf8'))
        .releases.filter((release) => !names.has(release.name))
        .map((release) => `${file}: ${release.name}`),
    );
  expect(unknown).toEqual([]);
});

describe('nothing in the repository cites a document outside it', () => {
  // Built from pieces so that this file does not cite them itself.
  const citations = [['SPEC', '§'].join(' '), ['SPEC', 'md'].join('.'), ['REFERENCE', 'TESTS'].join('-')];
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repo,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file !== '' && existsSync(join(repo, file)));

  it('reads the whole tree (tracked and new files)', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'package.json', 'test/repo-rules.test.ts']));
    expect(files.length).toBeGreaterThan(100);
  });

  it('no file says the forbidden words', () => {
    const offenders: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(repo, file), 'utf8');
      for (const citation of citations) if (text.includes(citation)) offenders.push(`${file}: ${citation}`);
    }
    expect(offenders).toEqual([]);
  });
});
