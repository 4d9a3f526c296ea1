// The OpenTelemetry Collector of the end-to-end suites (tools/otelcol): where its build is cached,
// and how it is built. The binary is never in the repository: it lives in
// ${XDG_CACHE_HOME:-~/.cache}/gym-telemetry/otelcol-<key>, where the key is a hash of
// tools/otelcol/go.mod, go.sum and main.go and of the Go toolchain (`go env GOVERSION GOOS
// GOARCH`), so a change to any of them builds a new binary and an unchanged tree reuses the old
// one. GYM_OTELCOL names another binary instead (one you built yourself).
//
//   node scripts/otelcol.mjs              build when not cached; print the binary's path
//   node scripts/otelcol.mjs --optional   the same, but without Go on PATH say so and exit 0
//                                         (the suite then skips, naming what is missing)
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Go module of the Collector. */
export const OTELCOL_DIR = fileURLToPath(new URL('../tools/otelcol/', import.meta.url));
/** The files whose content decides the binary. */
const SOURCES = ['go.mod', 'go.sum', 'main.go'];

/** `go env GOVERSION GOOS GOARCH`, or undefined without Go on PATH. */
function goToolchain() {
  try {
    return execFileSync('go', ['env', 'GOVERSION', 'GOOS', 'GOARCH'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** The folder the build is cached in. */
export function cacheDir(env = process.env) {
  const base = env.XDG_CACHE_HOME?.trim() ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'gym-telemetry');
}

/** The cache key of the sources with `toolchain`. */
function key(toolchain) {
  const hash = createHash('sha256').update(toolchain);
  for (const file of SOURCES) hash.update(`\0${file}\0`).update(readFileSync(join(OTELCOL_DIR, file)));
  return hash.digest('hex').slice(0, 16);
}

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The Collector binary to run: GYM_OTELCOL when set, else the cached build of these sources.
 * `found` is false with the reason when there is none (not built, or no Go to key it by).
 */
export function findOtelcol(env = process.env) {
  if (env.GYM_OTELCOL?.trim()) {
    const path = env.GYM_OTELCOL;
    return executable(path)
      ? { found: true, path }
      : { found: false, path, reason: `GYM_OTELCOL=${path} is not an executable file` };
  }
  const toolchain = goToolchain();
  if (toolchain === undefined)
    return { found: false, path: undefined, reason: 'go is not on PATH to build the Collector (tools/otelcol)' };
  const path = join(cacheDir(env), `otelcol-${key(toolchain)}`);
  return executable(path)
    ? { found: true, path }
    : { found: false, path, reason: `the Collector is not built (node scripts/otelcol.mjs builds ${path})` };
}

/** Builds the binary into the cache unless it is there; returns its path and what was done. */
export function buildOtelcol(env = process.env) {
  const found = findOtelcol(env);
  if (found.found) return { path: found.path, built: false };
  if (found.path === undefined || env.GYM_OTELCOL?.trim()) throw new Error(found.reason);
  mkdirSync(cacheDir(env), { recursive: true });
  const partial = `${found.path}.partial-${process.pid}`;
  const started = performance.now();
  // go.sum is committed: the default -mod=readonly builds exactly the modules it lists, checked
  // against the Go checksum database; -trimpath and no symbol table make a smaller binary.
  const run = spawnSync(
    'go',
    ['build', '-mod=readonly', '-buildvcs=false', '-trimpath', '-ldflags=-s -w', '-o', partial, '.'],
    {
      cwd: OTELCOL_DIR,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...env, CGO_ENABLED: '0', GOFLAGS: '' },
    },
  );
  if (run.status !== 0) {
    rmSync(partial, { force: true });
    throw new Error(`go build in ${OTELCOL_DIR} failed (status ${run.status ?? run.signal})`);
  }
  renameSync(partial, found.path);
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  const mib = Math.round((statSync(found.path).size / 2 ** 20) * 10) / 10;
  return { path: found.path, built: true, seconds, mib };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const optional = process.argv.includes('--optional');
  try {
    const found = findOtelcol();
    if (optional && !found.found && found.path === undefined) {
      // No Go, and no GYM_OTELCOL: nothing to build with.
      process.stdout.write(`otelcol: ${found.reason}; the Collector suite will skip\n`);
    } else {
      const result = buildOtelcol();
      process.stdout.write(
        result.built
          ? `otelcol: built ${result.path} in ${result.seconds} s (${result.mib} MiB)\n`
          : `otelcol: cached ${result.path}\n`,
      );
    }
  } catch (error) {
    process.stderr.write(`otelcol: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
