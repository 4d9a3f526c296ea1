// Two copies of a package in one process (an install npm did not deduplicate) are made from
// the build output: a copy is the package's package.json and dist/ in another folder, so Node
// resolves and loads it as a separate module. `npm test` builds first.

import { cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Set by jest.config.js in the `packed` project: the install of the packed tarballs. */
const packed = (globalThis as { GYM_PACKED_DIR?: string }).GYM_PACKED_DIR;

/**
 * The repository root (this file is packages/test-kit/src/package-copies.ts, or its dist). In
 * the `packed` jest project it is the install's `repo/` folder, laid out like the repository
 * (packages/<name> and node_modules are the installed tarballs and their dependencies), so a
 * suite that copies or links built packages from here gets what users install.
 */
export const REPO_ROOT = packed ? `${join(packed, 'repo')}/` : fileURLToPath(new URL('../../../', import.meta.url));

/** Copies the built workspace package `packages/<name>` (package.json + dist) to `to`. */
export function copyBuiltPackage(name: string, to: string): void {
  const from = join(REPO_ROOT, 'packages', name);
  if (!existsSync(join(from, 'dist', 'index.js'))) throw new Error(`packages/${name} is not built: run npm run build`);
  mkdirSync(to, { recursive: true });
  cpSync(join(from, 'package.json'), join(to, 'package.json'));
  cpSync(join(from, 'dist'), join(to, 'dist'), { recursive: true });
}

/** A directory symlink at `path` (parents made) pointing at `target`. */
export function linkDirectory(target: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path, 'dir');
}
