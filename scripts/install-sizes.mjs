// What a user installs for one library: every published library is packed (`npm pack` of the
// build: run `npm run build` first, or `npm run install-sizes`), then each is installed ALONE
// into an empty project outside the repository, as a user would with
// `npm install --omit=dev --no-audit --no-fund`: its tarball, the tarballs of its @gym/*
// dependencies and its peer dependencies at their declared ranges. Prints a Markdown table:
// the installed size of node_modules in MB, as files add up (du --apparent-size, the figure
// the issue quotes) and on disk (du, whole blocks), the number of packages npm installed (its
// own record, node_modules/.package-lock.json, the library itself included), and whether zod or
// any @opentelemetry/sdk-* came with it.
// Usage: node scripts/install-sizes.mjs [folder ...]   (e.g. `constants operations`; default: all)
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { emptyProject, installInto, packWorkspaces, publishedPackages, withDependencies } from './packed.mjs';

const run = promisify(execFile);

/** Installs `folder` alone into a new project under `work` and measures it. */
async function measure(folder, packages, tarballs, work) {
  const manifest = packages.get(folder);
  const project = emptyProject(join(work, folder));
  const specs = withDependencies([folder], packages).map((dep) => tarballs.get(dep));
  for (const [peer, range] of Object.entries(manifest.peerDependencies ?? {})) specs.push(`${peer}@${range}`);
  await installInto(project, specs, ['--omit=dev']);
  const du = async (...flags) =>
    Number.parseInt((await run('du', ['-sk', ...flags, join(project, 'node_modules')])).stdout, 10) / 1024;
  const lock = JSON.parse(readFileSync(join(project, 'node_modules', '.package-lock.json'), 'utf8'));
  const installed = Object.keys(lock.packages).filter((path) => path.startsWith('node_modules/'));
  const names = installed.map((path) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  const sdk = [...new Set(names.filter((name) => name.startsWith('@opentelemetry/sdk-')))].sort();
  return {
    name: manifest.name,
    apparent: await du('--apparent-size'),
    disk: await du(),
    packages: installed.length,
    zod: names.includes('zod'),
    sdk,
  };
}

/** The rows for the published libraries in `folders` (all of them when empty). */
export async function installSizes(folders = []) {
  const packages = publishedPackages();
  const unknown = folders.filter((folder) => !packages.has(folder));
  if (unknown.length > 0) throw new Error(`not a published library under packages/: ${unknown.join(', ')}`);
  const chosen = folders.length > 0 ? folders : [...packages.keys()].sort();
  const work = mkdtempSync(join(tmpdir(), 'gym-install-sizes-'));
  try {
    const tarballs = await packWorkspaces(withDependencies(chosen, packages), join(work, 'tarballs'));
    const rows = [];
    for (const folder of chosen) rows.push(await measure(folder, packages, tarballs, work));
    return rows;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The Markdown table of `rows`. */
export function table(rows) {
  const lines = [
    '| package | installed (MB) | on disk (MB) | packages | zod | @opentelemetry/sdk-* |',
    '| --- | ---: | ---: | ---: | --- | --- |',
  ];
  for (const row of rows) {
    const sdk = row.sdk.length > 0 ? row.sdk.join(', ') : 'no';
    const sizes = `${row.apparent.toFixed(2)} | ${row.disk.toFixed(2)}`;
    lines.push(`| ${row.name} | ${sizes} | ${row.packages} | ${row.zod ? 'yes' : 'no'} | ${sdk} |`);
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  process.stdout.write(table(await installSizes(process.argv.slice(2))));
}
