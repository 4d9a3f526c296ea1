// scripts/install-sizes.mjs measures what a user installs for one library alone. Run here for
// one small library: @gym/core installed alone brings @gym/constants and its peer
// @opentelemetry/api, and nothing else.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from '@jest/globals';

const run = promisify(execFile);
const repo = new URL('..', import.meta.url).pathname;
const script = join(repo, 'scripts', 'install-sizes.mjs');

it('prints one row per library: sizes, the packages npm installed, no zod and no SDK', async () => {
  const { stdout } = await run(process.execPath, [script, 'core'], { cwd: repo, timeout: 170_000 });
  const lines = stdout.trim().split('\n');
  expect(lines[0]).toBe('| package | installed (MB) | on disk (MB) | packages | zod | @opentelemetry/sdk-* |');
  expect(lines).toHaveLength(3);
  const [name, apparent, disk, packages, zod, sdk] = (lines[2] as string)
    .split('|')
    .slice(1, -1)
    .map((cell) => cell.trim());
  expect(name).toBe('@gym/core');
  // @gym/core, @gym/constants and the peer @opentelemetry/api.
  expect(packages).toBe('3');
  expect({ zod, sdk }).toEqual({ zod: 'no', sdk: 'no' });
  // The API alone is more than 0.5 MB; whole blocks on disk take at least the files' size.
  expect(Number(apparent)).toBeGreaterThan(0.5);
  expect(Number(disk)).toBeGreaterThanOrEqual(Number(apparent));
}, 180_000);

it('refuses a name that is not a published library', async () => {
  const failed = await run(process.execPath, [script, 'test-kit'], { cwd: repo }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => error,
  );
  expect(failed.code).toBe(1);
  expect(failed.stderr).toMatch(/not a published library under packages\/: test-kit/);
});
