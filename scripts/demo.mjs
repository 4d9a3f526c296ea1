// `npm run demo -- [options]`: builds every package, then runs the demo's orchestrator with
// the options. One command, so npm hands the options to the demo itself (in a script of the
// form `npm run build && …`, npm appends them to the last command only, the wrong one).
// The orchestrator runs in this process, so Ctrl-C, exit status and output are its own; the
// build's output goes to stderr, so stdout carries the demo's alone.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
if (build.status !== 0) {
  process.stderr.write(`demo: the build failed (${build.error?.message ?? `exit ${build.status ?? build.signal}`})\n`);
  process.exit(build.status ?? 1);
}
// process.argv is [node, this script, ...options]: exactly what the orchestrator reads.
await import('../apps/demo/dist/orchestrator.js');
