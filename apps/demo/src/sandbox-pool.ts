// Sandboxes here are real local child processes that hold real memory and burn a real
// share of a core, so the resource provider reads real numbers from /proc. The pool has a
// hard cap (a quota answered with 429, not a queue: a sandbox is held for seconds, and a
// caller should decide whether to wait), and every child ends by itself at its lifetime
// even if this server dies without cleaning up. An exec is real work inside the sandbox
// process (SHA-256 rounds, sent over its IPC channel), and an upload is a file handed to it
// over the same channel and kept in its memory. Like a remote provider that is briefly
// busy, this one fails the first attempt of one create in `createFailEvery` (the first create
// among them, so a short run shows it); the create retries at once and the retry is counted.

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

/** What one exec runs inside a sandbox: `rounds` SHA-256 rounds over `input`. */
export interface ExecRequest {
  readonly input: string;
  readonly rounds: number;
}

/** What one upload hands to a sandbox: a named file, kept in the sandbox process's memory. */
export interface UploadRequest {
  readonly name: string;
  readonly content: string;
}

/** Options of a {@link SandboxPool}. */
export interface SandboxPoolOptions {
  /** Live sandboxes at most; one more is a 429. */
  readonly capacity: number;
  /** One create in this many fails its first attempt and is retried; 0 = never. */
  readonly createFailEvery: number;
}

/** How long an exec may run before it is answered with 504. */
export const EXEC_TIMEOUT_MS = 5_000;

interface LiveSandbox {
  readonly handle: ProcessSandboxHandle;
  readonly child: ChildProcess;
  readonly lifecycle: SandboxLifecycle;
  readonly exited: Promise<SandboxExit>;
  readonly sampler: ResourceSampler | undefined;
}

// argv: memory MiB, cpu share, lifetime ms. Busy-waits `cpu` of every 50 ms slice, sleeps
// the rest, and holds a filled buffer so the memory is resident, not just reserved. An exec
// arrives over the IPC channel and is answered on it.
const SANDBOX_SCRIPT = [
  "const { createHash } = require('node:crypto');",
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
  'const files = new Map();',
  "process.on('message', (m) => {",
  "  if (m === null || typeof m !== 'object') return;",
  "  if (m.type === 'upload') {",
  '    files.set(String(m.name), String(m.content));',
  "    process.send({ type: 'result', id: m.id, bytes: Buffer.byteLength(String(m.content)) });",
  '    return;',
  '  }',
  "  if (m.type !== 'exec') return;",
  '  let digest = String(m.input);',
  "  for (let i = 0; i < m.rounds; i++) digest = createHash('sha256').update(digest).digest('hex');",
  "  process.send({ type: 'result', id: m.id, digest });",
  '});',
  'tick();',
].join('\n');

/** A create attempt the fake provider refused (it was busy); the next attempt may succeed. */
class ProviderBusyError extends Error {}

/** Attempts of one create: the first, and one retry. */
const CREATE_ATTEMPTS = 2;

/** The local-process sandboxes of one server. */
export class SandboxPool {
  readonly #live = new Map<string, LiveSandbox>();
  readonly #provider: ResourceProvider<ProcessSandboxHandle> = createProcessResourceProvider();
  readonly #capacity: number;
  readonly #createFailEvery: number;
  /** Creates past the quota check so far. */
  #creates = 0;
  /** The last exec id given out (a sandbox answers an exec by its id). */
  #execs = 0;

  constructor(options: SandboxPoolOptions) {
    this.#capacity = options.capacity;
    this.#createFailEvery = options.createFailEvery;
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
    // The first create, then one in `createFailEvery`, meets a busy provider on its first attempt.
    const every = this.#createFailEvery;
    const failFirst = every > 0 && ++this.#creates % every === 1 % every;
    // gym.sandbox.active +1 and the startup time (retries included) once the process runs; a
    // create that fails counts nothing. Each retried attempt counts one create retry.
    const lifecycle = new SandboxLifecycle({ provider: 'local-process' });
    const id = randomUUID();
    // gym.sandbox.start around the create, named by the sandbox's id.
    const child = lifecycle.create(
      () => {
        for (let attempt = 1; ; attempt++) {
          try {
            if (failFirst && attempt === 1) throw new ProviderBusyError('the provider is busy');
            return spawnSandbox(request);
          } catch (error) {
            if (!(error instanceof ProviderBusyError) || attempt >= CREATE_ATTEMPTS) throw error;
            lifecycle.retried();
          }
        }
      },
      () => id,
    );
    const handle: ProcessSandboxHandle = {
      id,
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
    const sandbox: LiveSandbox = { handle, child, lifecycle, exited, sampler };
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

  /**
   * Runs one exec inside the sandbox process and records its duration
   * (`gym.sandbox.exec_duration_ms`) whether it succeeds or fails: 409 when the sandbox ends
   * during the exec, 504 after {@link EXEC_TIMEOUT_MS}.
   */
  async exec(id: string, request: ExecRequest): Promise<{ readonly digest: string }> {
    const sandbox = this.#get(id);
    const execId = ++this.#execs;
    const message = { type: 'exec', id: execId, input: request.input, rounds: request.rounds };
    return sandbox.lifecycle.exec(async () => ({ digest: String((await ask(sandbox, message)).digest ?? '') }));
  }

  /**
   * Hands one file to the sandbox process and waits for its receipt, timed into
   * `gym.sandbox.transfer_duration_ms` whether it succeeds or fails (409, 504 as for an exec).
   */
  async upload(id: string, request: UploadRequest): Promise<{ readonly bytes: number }> {
    const sandbox = this.#get(id);
    const message = { type: 'upload', id: ++this.#execs, name: request.name, content: request.content };
    return sandbox.lifecycle.transfer(async () => ({ bytes: Number((await ask(sandbox, message)).bytes ?? 0) }));
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

function spawnSandbox(request: SandboxRequest): ChildProcess {
  const spawned = spawn(
    process.execPath,
    ['-e', SANDBOX_SCRIPT, String(request.memoryMib), String(request.cpu), String(request.lifetimeMs)],
    { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] },
  );
  if (spawned.pid === undefined) {
    throw new HttpError(503, 'the sandbox process could not be started');
  }
  return spawned;
}

/** Sends one message (an exec or an upload) to the sandbox process and waits for its answer, its end, or the timeout. */
function ask(
  sandbox: LiveSandbox,
  message: { readonly type: string; readonly id: number },
): Promise<{ readonly digest?: unknown; readonly bytes?: unknown }> {
  const { child } = sandbox;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new HttpError(504, `the ${message.type} did not finish within ${EXEC_TIMEOUT_MS} ms`)),
      EXEC_TIMEOUT_MS,
    );
    const onMessage = (received: unknown): void => {
      const answer = received as { type?: unknown; id?: unknown; digest?: unknown; bytes?: unknown } | null;
      if (answer?.type === 'result' && answer.id === message.id) finish(undefined, answer);
    };
    const onExit = (): void => finish(new HttpError(409, `the sandbox ended during the ${message.type}`));
    function finish(error: Error | undefined, answer?: { digest?: unknown; bytes?: unknown }): void {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error === undefined) resolve(answer ?? {});
      else reject(error);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
    if (!child.connected) {
      onExit();
      return;
    }
    child.send(message, (error) => {
      if (error !== null && error !== undefined) onExit();
    });
  });
}

async function stop(sandbox: LiveSandbox): Promise<SandboxExit> {
  if (sandbox.child.exitCode === null && sandbox.child.signalCode === null) {
    // The sampler's final record is taken while the process still runs, so it carries a real reading.
    await sandbox.sampler?.stop();
    // gym.sandbox.stop around the close (the -1 is given back here, or at the exit, whichever comes first).
    return sandbox.lifecycle.release(async () => {
      sandbox.child.kill('SIGTERM');
      const force = setTimeout(() => sandbox.child.kill('SIGKILL'), 1000);
      const exit = await sandbox.exited;
      clearTimeout(force);
      return exit;
    }) as Promise<SandboxExit>;
  }
  return sandbox.exited;
}
