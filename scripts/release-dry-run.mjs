// `npm run release`: what a release would publish, without publishing anything. Runs
// `npm publish --dry-run` for every package that is not private, in dependency order
// (constants first), after `npm run build`. Real publishing is `changeset publish`
// (test/release.test.ts runs it against a local registry).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const packages = readdirSync(join(root, 'packages'))
  .map((name) => ({
    dir: join(root, 'packages', name),
    manifest: JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')),
  }))
  .filter(({ manifest }) => manifest.private !== true)
  .sort(
    (a, b) => Object.keys(a.manifest.dependencies ?? {}).length - Object.keys(b.manifest.dependencies ?? {}).length,
  );

for (const { dir, manifest } of packages) {
  process.stdout.write(`\n# ${manifest.name}@${manifest.version}\n`);
  // --loglevel=notice: the repository's .npmrc keeps npm quiet, and the dry run's report is notices.
  execFileSync('npm', ['publish', '--dry-run', '--ignore-scripts', '--access', 'public', '--loglevel=notice'], {
    cwd: dir,
    stdio: 'inherit',
  });
}
process.stdout.write(`\nDry run only: ${packages.length} packages checked, nothing published.\n`);
