// Sandboxes here are real local child processes that hold real memory and burn a real
// share of a core, so the resource provider reads real numbers from /proc. The pool has a
// hard cap (a quota answered with 429, not a queue: a sandbox is held for seconds, and a
// caller should decide whether to wait), and every child ends by itself at its lifetime
// even if this server dies without cleaning up.

import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { ProcessSandboxHandle, ResourceProvider, SandboxAttributes } from '@gym/sandbox-telemetry';
import {
  createProcessResourceProvider,
  ResourceSampler,
  recordAllocation,
  recordRequest,
  SandboxLifecycle,
  samplingInterval,
} from '@gym/sandbox-telemetry';
import { HttpError } from './http-error.js';

/** What a sandbox is asked to hold and do. */
export interface SandboxRequest {
  /** Share of one core the sandbox keeps busy, 0 to 1. */
  readonly cpu: number;
  /** Memory the sandbox allocates and touches, in MiB. */
  readonly memoryMib: number;
  /** The sandbox exits by itself after this many ms. */
  readonly lifetimeMs: number;
}

/** How a sandbox process ended. */
export interface SandboxExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

interface LiveSandbox {
  readonly handle: ProcessSandboxHandle;
  readonly child: ChildProcess;
  readonly exited: Promise<SandboxExit>;
  readonly sampler: ResourceSampler | undefined;
}

// argv: memory MiB, cpu share, lifetime ms. Busy-waits `cpu` of every 50 ms slice, sleeps
// the rest, and holds a filled buffer so the memory is resident, not just reserved.
const SANDBOX_SCRIPT = [
  'const [mib, cpu, life] = process.argv.slice(1).map(Number);',
  'globalThis.held = Buffer.alloc(mib * 1024 * 1024, 1);',
  'const end = Date.now() + life;',
  'const tick = () => {',
  '  const now = Date.now();',
  '  if (now >= end) process.exit(0);',
  '  while (Date.now() < now + cpu * 50) {}',
  '  setTimeout(tick, Math.max(1, 50 - cpu * 50));',
  '};',
  "process.on('SIGTERM', () => process.exit(0));",
  'tick();',
].join('\n');

/** The local-process sandboxes of one server. */
export class SandboxPool {
  readonly #live = new Map<string, LiveSandbox>();
  readonly #provider: ResourceProvider<ProcessSandboxHandle> = createProcessResourceProvider();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Live sandboxes and the cap, for GET /limits. */
  get usage(): { readonly live: number; readonly limit: number } {
    return { live: this.#live.size, limit: this.#capacity };
  }

  /** Starts one sandbox process; a 429 when the pool is full. */
  create(request: SandboxRequest): ProcessSandboxHandle {
    if (this.#live.size >= this.#capacity) {
      throw new HttpError(429, `this server already runs its maximum of ${this.#capacity} sandboxes; delete one first`);
    }
    // Recorded before the process starts, so a request whose start fails is still counted.
    const carried: SandboxAttributes = recordRequest(
      { resources: { cpu: request.cpu, memoryMib: request.memoryMib } },
      { 'nemo.gym.sandbox.provider': 'local-process' },
    );
    // gym.sandbox.active +1 and the startup time once the process runs; a spawn that fails counts nothing.
    const lifecycle = new SandboxLifecycle({ provider: 'local-process' });
    const child = lifecycle.create(() => {
      const spawned = spawn(
        process.execPath,
        ['-e', SANDBOX_SCRIPT, String(request.memoryMib), String(request.cpu), String(request.lifetimeMs)],
        { stdio: 'ignore' },
      );
      if (spawned.pid === undefined) {
        throw new HttpError(503, 'the sandbox process could not be started');
      }
      return spawned;
    });
    const handle: ProcessSandboxHandle = {
      id: randomUUID(),
      owned: true,
      pid: child.pid!,
      requests: { cpu: request.cpu, memoryMib: request.memoryMib },
    };
    const exited = new Promise<SandboxExit>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    void recordAllocation(handle, this.#provider, carried);
    const interval = samplingInterval();
    const sampler = interval > 0 ? new ResourceSampler(this.#provider, handle, carried, interval) : undefined;
    sampler?.start();
    const sandbox: LiveSandbox = { handle, child, exited, sampler };
    this.#live.set(handle.id, sandbox);
    // A sandbox that reached its lifetime is gone before the sampler's final record: that
    // record then has no reading, and the sampler counts one error (the truth: nothing to read).
    void exited.then(() => {
      lifecycle.release(); // -1 exactly once, whether it reached its lifetime or was deleted
      this.#live.delete(handle.id);
      return sampler?.stop();
    });
    return handle;
  }

  /** A real reading of the sandbox's CPU and memory from /proc, through the resource provider. */
  async sample(id: string): Promise<{ readonly handle: ProcessSandboxHandle; readonly sample: SandboxAttributes }> {
    const sandbox = this.#get(id);
    const sample = (await this.#provider.resourceSample?.(sandbox.handle)) ?? {};
    return { handle: sandbox.handle, sample };
  }

  /** Stops one sandbox (SIGTERM, then SIGKILL after a second) and waits for it. */
  async delete(id: string): Promise<SandboxExit> {
    return stop(this.#get(id));
  }

  /** Stops every sandbox; for shutdown. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#live.values()].map(stop));
  }

  #get(id: string): LiveSandbox {
    const sandbox = this.#live.get(id);
    if (sandbox === undefined) throw new HttpError(404, `no live sandbox with id ${JSON.stringify(id.slice(0, 64))}`);
    return sandbox;
  }
}

async function stop(sandbox: LiveSandbox): Promise<SandboxExit> {
  if (sandbox.child.exitCode === null && sandbox.child.signalCode === null) {
    // The sampler's final record is taken while the process still runs, so it carries a real reading.
    await sandbox.sampler?.stop();
    sandbox.child.kill('SIGTERM');
    const force = setTimeout(() => sandbox.child.kill('SIGKILL'), 1000);
    const exit = await sandbox.exited;
    clearTimeout(force);
    return exit;
  }
  return sandbox.exited;
}
