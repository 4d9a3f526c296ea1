// Waiting for a child process to end, and ending it: SIGTERM first, SIGKILL after a grace
// period. Shared by the fleet (resources servers) and the local Prometheus.

import type { ChildProcess } from 'node:child_process';

/** True until the child has exited or was killed by a signal. */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Resolves when `child` has exited (at once when it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (!isRunning(child)) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM to `child`, SIGKILL when it still runs after `graceMs`; resolves when it exited. */
export async function terminate(child: ChildProcess, graceMs: number): Promise<void> {
  if (!isRunning(child)) return;
  const done = exited(child);
  child.kill('SIGTERM');
  const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(force);
}
