// Verdaccio, the npm registry of the release test (test/release.test.ts): where it is cached,
// how it is installed, and how a throwaway registry is started. It is not a dependency of the
// repository (`npm ci` stays quiet and the lockfile lean): this script installs one pinned
// release into ${XDG_CACHE_HOME:-~/.cache}/gym-telemetry/verdaccio-<version> with npm, once.
//
//   node scripts/verdaccio.mjs    install when not cached; print the path of its CLI
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The pinned release (6.8 runs on Node 20). */
export const VERDACCIO_VERSION = '6.8.0';

/** The folder the install is cached in. */
export function verdaccioDir(env = process.env) {
  const base = env.XDG_CACHE_HOME?.trim() ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'gym-telemetry', `verdaccio-${VERDACCIO_VERSION}`);
}

/** The cached CLI (`bin/verdaccio` of the package), or undefined when not installed. */
export function findVerdaccio(env = process.env) {
  const bin = join(verdaccioDir(env), 'node_modules', 'verdaccio', 'bin', 'verdaccio');
  return existsSync(bin) ? bin : undefined;
}

/** Installs the pinned release into the cache (into a fresh folder, renamed when complete). */
export function installVerdaccio(env = process.env) {
  const found = findVerdaccio(env);
  if (found) return found;
  const dir = verdaccioDir(env);
  mkdirSync(join(dir, '..'), { recursive: true });
  const partial = mkdtempSync(`${dir}.partial-`);
  try {
    writeFileSync(join(partial, 'package.json'), '{ "name": "gym-verdaccio", "private": true }\n');
    execFileSync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', `verdaccio@${VERDACCIO_VERSION}`],
      { cwd: partial, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (!existsSync(dir)) renameSync(partial, dir);
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return findVerdaccio(env);
}

/** A port free on 127.0.0.1 now (Verdaccio is told the port it listens on). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts the cached Verdaccio on 127.0.0.1 with a throwaway config and storage under `dir`:
 * `@gym/*` is published and served locally only (no uplink); every other package is proxied
 * from the npm registry. Resolves { url, token, stop } once it answers; `token` is a user's
 * token for publishing.
 */
export async function startVerdaccio(dir, { node = process.execPath, bin = findVerdaccio() } = {}) {
  if (!bin) throw new Error('Verdaccio is not installed: node scripts/verdaccio.mjs installs it');
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `storage: ${JSON.stringify(join(dir, 'storage'))}
auth:
  htpasswd:
    file: ${JSON.stringify(join(dir, 'htpasswd'))}
    max_users: 10
uplinks:
  npmjs:
    url: https://registry.npmjs.org/
packages:
  '@gym/*':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
  '**':
    access: $all
    proxy: npmjs
log: { type: stdout, format: pretty, level: warn }
`,
  );
  const child = spawn(node, [bin, '--config', config, '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}/`;
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Verdaccio exited (code ${child.exitCode}): ${output}`);
    try {
      if ((await fetch(`${url}-/ping`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Verdaccio did not answer on ${url}: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // A user, as `npm adduser` makes one; its token publishes.
  const name = 'gym-release';
  const response = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password: 'gym-release-password', type: 'user', roles: [] }),
  });
  const { token } = await response.json();
  if (!token) {
    await stop();
    throw new Error(`Verdaccio made no user (${response.status}): ${output}`);
  }
  return { url, token, stop, output: () => output };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bin = installVerdaccio();
  if (!bin) {
    process.stderr.write('verdaccio: install failed\n');
    process.exit(1);
  }
  process.stdout.write(`${bin}\n`);
}
