// The local Prometheus must die with the orchestrator, even when the orchestrator is
// SIGKILLed and has no chance to stop it. Prometheus cannot be told to follow its parent, so it
// runs under a guardian: a few lines of Node between the two, whose stdin is a pipe from the
// orchestrator. When the orchestrator dies, however it dies, the kernel closes that pipe; the
// guardian sees the end of its stdin, SIGKILLs Prometheus, removes its temporary folder and
// exits. A SIGTERM to the guardian stops Prometheus in order (SIGKILL after 4 s) and the guardian
// exits with Prometheus' status, so the guardian stands for Prometheus in every other respect.
// It is run with `node -e`, so it works from the sources and from the build alike.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const GUARDIAN = `
const { spawn } = require('node:child_process');
const { rmSync } = require('node:fs');
const [dir, binary, ...args] = process.argv.slice(1);
const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'inherit'] });
let orphaned = false;
let ending = false;
function end(signal) {
  if (ending) return;
  ending = true;
  child.kill(signal);
  if (signal !== 'SIGKILL') setTimeout(() => child.kill('SIGKILL'), 4000).unref();
}
process.on('SIGTERM', () => end('SIGTERM'));
process.on('SIGINT', () => end('SIGTERM'));
process.stdin.on('data', () => {});
process.stdin.on('error', () => {});
process.stdin.on('close', () => { orphaned = true; end('SIGKILL'); });
child.on('error', (error) => { process.stderr.write(error.message + '\\n'); process.exit(127); });
child.on('exit', (code, signal) => {
  if (orphaned) rmSync(dir, { recursive: true, force: true });
  process.exit(code ?? (signal === null ? 1 : 128));
});
`;

/** The file in a Prometheus temporary folder that names the process owning it. */
const OWNER_FILE = 'owner.pid';

/**
 * Spawns `binary args` under a guardian tied to this process: Prometheus ends when this process
 * does, however it ends. The returned child is the guardian (signals, exit status and stderr
 * stand for Prometheus'). `dir` is removed by the guardian when this process died first.
 */
export function spawnGuarded(binary: string, args: readonly string[], dir: string): ChildProcess {
  const guardian = spawn(process.execPath, ['-e', GUARDIAN, dir, binary, ...args], {
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  guardian.stdin?.on('error', () => {}); // the guardian is gone: nothing to tell it
  return guardian;
}

/** True while a process with this pid exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Marks `dir` as owned by this process, for {@link removeLeftovers}. */
export async function claim(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, OWNER_FILE), `${process.pid}\n`);
}

/**
 * Removes the temporary folders (`<parent>/<prefix>*`) of earlier runs whose owner is gone (one
 * killed together with its guardian). A folder without an owner file is left alone; so is one
 * whose owner runs. Resolves with the folders removed.
 */
export async function removeLeftovers(parent: string, prefix: string): Promise<string[]> {
  const removed: string[] = [];
  let entries: string[];
  try {
    entries = (await readdir(parent)).filter((name) => name.startsWith(prefix));
  } catch {
    return removed;
  }
  for (const name of entries) {
    const dir = join(parent, name);
    let owner: number;
    try {
      owner = Number.parseInt(await readFile(join(dir, OWNER_FILE), 'utf8'), 10);
    } catch {
      continue;
    }
    if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) continue;
    await rm(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}
