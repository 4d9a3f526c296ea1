// Packing and installing the repository's packages the way a user gets them: `npm pack` of
// each publishable package, then `npm install` of tarballs into an empty project outside the
// repository. Shared by the pack-install and OpenTelemetry 3.x tests.

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const repo = new URL('../../', import.meta.url).pathname;

export interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export interface WorkspacePackage {
  dir: string;
  manifest: Manifest;
}

/** Every package under packages/ that is not private (the private test kit is never packed). */
export function publishablePackages(): WorkspacePackage[] {
  return readdirSync(join(repo, 'packages'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(repo, 'packages', entry.name, 'package.json')))
    .map((entry) => {
      const dir = join(repo, 'packages', entry.name);
      return { dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest };
    })
    .filter(({ manifest }) => manifest.private !== true);
}

/** The package's @gym/* dependencies among `packages`, transitively, itself included. */
export function closure(
  name: string,
  packages: ReadonlyMap<string, WorkspacePackage>,
  seen = new Set<string>(),
): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  for (const dep of Object.keys(packages.get(name)?.manifest.dependencies ?? {})) {
    if (packages.has(dep)) closure(dep, packages, seen);
  }
  return seen;
}

export interface Packed {
  tarball: string;
  files: string[];
}

/** `npm pack` of each package into `destination` (built dist/ must exist: `npm run build`). */
export async function packAll(
  packages: readonly WorkspacePackage[],
  destination: string,
): Promise<Map<string, Packed>> {
  const packed = new Map<string, Packed>();
  for (const { dir, manifest } of packages) {
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], {
      cwd: dir,
    });
    const [info] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
    packed.set(manifest.name, {
      tarball: join(destination, info.filename),
      files: info.files.map((file) => file.path),
    });
  }
  return packed;
}

/** A new empty project (a package.json only) in a fresh directory under `parent`. */
export function emptyProject(parent: string, extra: Record<string, unknown> = {}): string {
  const project = mkdtempSync(join(parent, 'project-'));
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'probe', private: true, version: '0.0.0', ...extra }, null, 2),
  );
  return project;
}

/**
 * `npm install` of `specs` (tarball paths or name@range) into `project`, as a user would: with
 * npm's warnings on (the repository's .npmrc turns them off, and `npm test` passes that on as
 * npm_config_loglevel), so that a test can assert there are none.
 */
export async function install(project: string, specs: readonly string[], env: NodeJS.ProcessEnv = process.env) {
  const { npm_config_loglevel: _repositoryLoglevel, ...userEnv } = env;
  return run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', '--no-package-lock', ...specs],
    { cwd: project, env: userEnv, maxBuffer: 16 * 1024 * 1024 },
  );
}

/** One installed copy of a package: its version and its folder relative to the project. */
export interface InstalledCopy {
  version: string;
  path: string;
}

/** name → every copy installed anywhere in `project`'s node_modules tree. */
export function installedCopies(project: string): Map<string, InstalledCopy[]> {
  const found = new Map<string, InstalledCopy[]>();
  const visit = (nodeModules: string) => {
    if (!existsSync(nodeModules)) return;
    for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const dirs = entry.name.startsWith('@')
        ? readdirSync(join(nodeModules, entry.name)).map((name) => join(nodeModules, entry.name, name))
        : [join(nodeModules, entry.name)];
      for (const dir of dirs) {
        const manifestPath = join(dir, 'package.json');
        if (!existsSync(manifestPath)) continue;
        const { name, version } = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
        const copies = found.get(name) ?? [];
        copies.push({ version, path: dir.slice(project.length + 1) });
        found.set(name, copies);
        visit(join(dir, 'node_modules'));
      }
    }
  };
  visit(join(project, 'node_modules'));
  return found;
}

/** name → every version installed anywhere in `project`'s node_modules tree. */
export function installedVersions(project: string): Map<string, Set<string>> {
  return new Map(
    [...installedCopies(project)].map(([name, copies]) => [name, new Set(copies.map((copy) => copy.version))]),
  );
}
