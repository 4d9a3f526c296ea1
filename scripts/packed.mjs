// The libraries as users get them: `npm pack` of the built workspaces, installed from the
// tarballs into a project outside the repository. Two users:
// - scripts/run-jest.mjs runs the defect suites of @gym/operations a second time over such an
//   install (jest.config.js, project `packed`), with the OpenTelemetry JS line of that run;
// - scripts/install-sizes.mjs installs each library alone and measures it.
//
// `preparePacked(line)` packs once per content: the install lives in the system temporary
// folder (one folder per checkout) under a hash of what it is made of (each packed library's package.json, README, LICENSE
// and dist/, the SDK line's versions, the test libraries), and is reused while that hash holds.
// Usage: node scripts/packed.mjs 2|3   (the SDK line; prints the folder of the install)
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const repo = new URL('..', import.meta.url).pathname;
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** The libraries the packed jest project loads from tarballs (their @gym/* dependencies follow). */
export const PACKED_LIBRARIES = ['constants', 'core', 'operations', 'metrics'];
/** The OpenTelemetry packages the packed project maps to the install (jest.config.js OTEL). */
export const OTEL_PACKAGES = [
  'api',
  'context-async-hooks',
  'core',
  'exporter-prometheus',
  'resources',
  'sdk-metrics',
  'sdk-trace',
];
/** The limits a user meters, installed beside the libraries (the two-copies suite links them). */
const TEST_LIBRARIES = ['async-mutex', 'p-limit'];

/** Every package under packages/ that is published (not private): folder name → manifest. */
export function publishedPackages() {
  const found = new Map();
  for (const entry of readdirSync(join(repo, 'packages'), { withFileTypes: true })) {
    const manifest = join(repo, 'packages', entry.name, 'package.json');
    if (!entry.isDirectory() || !existsSync(manifest)) continue;
    const json = readJson(manifest);
    if (json.private !== true) found.set(entry.name, json);
  }
  return found;
}

/** The folder names of `names` and of their @gym/* dependencies, transitively. */
export function withDependencies(names, packages = publishedPackages()) {
  const byName = new Map([...packages].map(([folder, manifest]) => [manifest.name, folder]));
  const seen = new Set();
  const visit = (folder) => {
    if (seen.has(folder)) return;
    seen.add(folder);
    for (const dep of Object.keys(packages.get(folder)?.dependencies ?? {})) {
      if (byName.has(dep)) visit(byName.get(dep));
    }
  };
  for (const name of names) visit(name);
  return [...seen];
}

/** `npm pack` of the workspaces `folders` (built: `npm run build`) in one npm call: folder → tarball. */
export async function packWorkspaces(folders, destination) {
  mkdirSync(destination, { recursive: true });
  const workspaces = folders.flatMap((folder) => ['--workspace', `packages/${folder}`]);
  const { stdout } = await run(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', destination, ...workspaces],
    { cwd: repo, maxBuffer: 64 * 1024 * 1024 },
  );
  const byName = new Map(JSON.parse(stdout).map((info) => [info.name, join(destination, info.filename)]));
  const packages = publishedPackages();
  return new Map(folders.map((folder) => [folder, byName.get(packages.get(folder).name)]));
}

/** A new project (a package.json only) at `dir`. */
export function emptyProject(dir) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'probe', private: true, version: '0.0.0' })}\n`);
  return dir;
}

/** `npm install` of `specs` (tarballs or name@range) into `project`, as a user would. */
export function installInto(project, specs, extra = []) {
  return run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', ...extra, ...specs],
    {
      cwd: project,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
}

/** name@version of each OpenTelemetry package of SDK line `line`, as the repository pins it. */
function sdkSpecs(line) {
  const pins =
    line === 2
      ? readJson(join(repo, 'test', 'otel2', 'package.json')).dependencies
      : readJson(join(repo, 'package.json')).devDependencies;
  const operations = readJson(join(repo, 'packages', 'operations', 'package.json')).devDependencies;
  return [
    ...OTEL_PACKAGES.map((pkg) => `@opentelemetry/${pkg}@${pins[`@opentelemetry/${pkg}`]}`),
    ...TEST_LIBRARIES.filter((pkg) => operations[pkg]).map((pkg) => `${pkg}@${operations[pkg]}`),
  ];
}

/** Every file of `dir`, sorted, relative to `dir` (build info left out: it is not shipped). */
function filesOf(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((file) => !file.endsWith('tsbuildinfo') && statSync(join(dir, file)).isFile())
    .sort();
}

/** The content hash of the install `preparePacked` would make. */
export function packedKey(line, folders = withDependencies(PACKED_LIBRARIES)) {
  const hash = createHash('sha256').update(JSON.stringify({ line, specs: sdkSpecs(line), folders }));
  for (const folder of folders) {
    const dir = join(repo, 'packages', folder);
    const files = ['package.json', 'README.md', 'LICENSE', ...filesOf(join(dir, 'dist')).map((f) => join('dist', f))];
    for (const file of files) {
      if (!existsSync(join(dir, file))) continue;
      hash.update(`\0${folder}/${file}\0`).update(readFileSync(join(dir, file)));
    }
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The install of the packed libraries with SDK line `line` (2 or 3): made on first use, then
 * reused while its content hash holds; older installs are removed. Beside node_modules, `repo/`
 * is laid out like the repository (packages/<name> and node_modules link into the install), so
 * a suite that copies built packages from the repository root copies the installed ones.
 */
export async function preparePacked(line) {
  // One cache folder per checkout: a run replaces only its own checkout's older installs.
  const checkout = createHash('sha256').update(repo).digest('hex').slice(0, 8);
  const cache = join(tmpdir(), 'gym-telemetry-packed', checkout);
  const folders = withDependencies(PACKED_LIBRARIES);
  if (!folders.every((folder) => existsSync(join(repo, 'packages', folder, 'dist', 'index.js')))) {
    throw new Error('the libraries are not built: run npm run build');
  }
  const key = `otel${line}-${packedKey(line, folders)}`;
  const dir = join(cache, key);
  if (existsSync(join(dir, '.ready'))) return dir;

  mkdirSync(cache, { recursive: true });
  // Older installs of this line, and what an interrupted run left over an hour ago.
  for (const old of readdirSync(cache)) {
    const stale = old.startsWith('partial-') && Date.now() - statSync(join(cache, old)).mtimeMs > 3_600_000;
    if (old.startsWith(`otel${line}-`) || stale) rmSync(join(cache, old), { recursive: true, force: true });
  }
  const partial = emptyProject(join(cache, `partial-${key}-${process.pid}`));
  try {
    const tarballs = await packWorkspaces(folders, join(partial, 'tarballs'));
    await installInto(partial, [...tarballs.values(), ...sdkSpecs(line)]);
    const packages = publishedPackages();
    mkdirSync(join(partial, 'repo', 'packages'), { recursive: true });
    symlinkSync(join('..', 'node_modules'), join(partial, 'repo', 'node_modules'), 'dir');
    for (const folder of folders) {
      const installed = join(partial, 'node_modules', packages.get(folder).name);
      symlinkSync(relative(join(partial, 'repo', 'packages'), installed), join(partial, 'repo', 'packages', folder));
    }
    writeFileSync(join(partial, '.ready'), `${new Date().toISOString()}\n`);
    renameSync(partial, dir);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    if (existsSync(join(dir, '.ready'))) return dir; // another run made it meanwhile
    throw error;
  }
  return dir;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const line = Number(process.argv[2]);
  if (line !== 2 && line !== 3) throw new Error('usage: node scripts/packed.mjs 2|3 (the OpenTelemetry JS line)');
  process.stdout.write(`${await preparePacked(line)}\n`);
}
