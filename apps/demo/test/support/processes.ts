// Helpers for the demo's tests: they run the BUILT JavaScript (apps/demo/dist), as a user
// would, and every helper has a deadline so a broken build fails a test instead of
// hanging it.

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Absolute path of a built file of the demo. */
export function distFile(name: string): string {
  return fileURLToPath(new URL(`../../dist/${name}`, import.meta.url));
}

/**
 * True while a process with this pid runs. A zombie (exited, not yet reaped: what an
 * orphan becomes under an init that reaps slowly) counts as gone.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return !existsSync('/proc/self/stat'); // no /proc: trust kill(0)
  }
}

/** Polls `check` until it returns a value other than undefined, or throws after `timeoutMs` with `what`. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Resolves with the exit code and signal once `child` exits (at once if it already has). */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export async function terminate(child: ChildProcess | undefined, graceMs = 5_000): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const done = exited(child);
  child.kill('SIGTERM');
  const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(force);
}

/** A child with its stdout and stderr collected as text. */
export interface Captured {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
}

/** Spawns `node <script> ...args` with output captured. */
export function spawnNode(script: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Captured {
  // The IPC channel ties the child to this test process: if jest dies, the child sees it close and stops.
  const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const captured: Captured = { child, stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    captured.stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    captured.stderr += chunk;
  });
  return captured;
}

/** A resources server started alone for a test. */
export interface TestServer {
  readonly url: string;
  readonly metrics: string | null;
  readonly pid: number;
  readonly process: Captured;
}

/** Starts `dist/server.js` with these flags and environment; resolves once it printed its ready line. */
export async function startServer(args: readonly string[], env: NodeJS.ProcessEnv): Promise<TestServer> {
  const captured = spawnNode(distFile('server.js'), args, env);
  const ready = await waitFor(
    'the server ready line',
    () => {
      if (captured.child.exitCode !== null) throw new Error(`server exited: ${captured.stderr}`);
      const line = captured.stdout.split('\n').find((candidate) => candidate.startsWith('{"type":"ready"'));
      return line === undefined
        ? undefined
        : (JSON.parse(line) as { url: string; metrics: string | null; pid: number });
    },
    45_000,
    50,
  );
  return { url: ready.url, metrics: ready.metrics, pid: ready.pid, process: captured };
}

/** Environment that turns telemetry on with a Prometheus endpoint on this port. */
export function prometheusEnv(port: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NEMO_GYM_OTEL_ENABLED: '1',
    NEMO_GYM_OTEL_EXPORTER: 'prometheus',
    OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
    OTEL_EXPORTER_PROMETHEUS_PORT: String(port),
    OTEL_EXPORTER_OTLP_ENDPOINT: '',
  };
}
