// Spawns, supervises and stops the resources server processes. Each server gets its own
// Prometheus port (port 0, bound by the server itself), its own process group (so a Ctrl-C
// reaches the orchestrator alone, which then stops the fleet in order), and an IPC channel
// whose loss makes a server stop itself: no orphans, even when the orchestrator is killed
// outright. A server that dies while the fleet runs is restarted after a backoff, within a
// restart budget; the fleet reports every death and restart to its owner, who decides what
// they mean (the orchestrator is the one that records how many servers are up).

import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isRunning, terminate } from './child-exit.js';
import type { ReadyMessage } from './server.js';
import type { SpawnTrace } from './startup-trace.js';

/** One running server process of the fleet. */
export interface FleetMember extends ReadyMessage {
  readonly child: ChildProcess;
  /** Position in the fleet (0-based); the same across restarts. */
  readonly index: number;
  /** 0 for the first process of this server, then 1, 2, … per restart. */
  readonly restart: number;
}

/** A server that died while nobody asked it to stop. */
export interface ServerDeath {
  readonly name: string;
  readonly index: number;
  readonly pid: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Wall-clock time of the death. */
  readonly at: Date;
  /** The member that died. */
  readonly member: FleetMember;
}

/** When and how often a dead server is started again. */
export interface RestartPolicy {
  /** Restarts allowed per server over the whole run; beyond it the server stays down. */
  readonly budget: number;
  /** Wait before the first restart; doubled for each further one. */
  readonly initialBackoffMs: number;
  /** Longest wait before a restart. */
  readonly maxBackoffMs: number;
}

/** The default: three restarts per server, 250 ms, 500 ms, 1 s apart. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = { budget: 3, initialBackoffMs: 250, maxBackoffMs: 4_000 };

/** How to start the fleet. */
export interface FleetOptions {
  readonly count: number;
  /** Flags for every server (`--name` is added per server). */
  readonly serverArgs: readonly string[];
  /** Give each server its own Prometheus port (when metrics go to Prometheus). */
  readonly prometheus: boolean;
  /** Called with each line a server writes to stderr. */
  readonly onLog: (name: string, line: string) => void;
  /** Called when a server exits before `stop()` asked it to. */
  readonly onDeath: (death: ServerDeath, restartInMs: number | null) => void;
  /** Called when a restarted server is ready again. */
  readonly onRestarted: (member: FleetMember) => void;
  /** Called when a restart failed (the server stays down when the budget is spent). */
  readonly onRestartFailed: (name: string, reason: string, retryInMs: number | null) => void;
  readonly restartPolicy?: RestartPolicy;
  /** Called as each server is spawned: variables for its environment, and the end of its startup span. */
  readonly onSpawn?: (name: string) => SpawnTrace;
}

/** A server must report ready within this long. */
const READY_TIMEOUT_MS = 15_000;
/** A server gets this long to stop after SIGTERM before SIGKILL (it gives itself 4 s). */
const STOP_GRACE_MS = 5_000;

const SERVER_SCRIPT = fileURLToPath(new URL('./server.js', import.meta.url));

interface Slot {
  readonly index: number;
  readonly name: string;
  current: FleetMember | undefined;
  restarts: number;
  timer: NodeJS.Timeout | undefined;
}

/** The running servers; `stop()` ends them all. */
export class Fleet {
  readonly #options: FleetOptions;
  readonly #policy: RestartPolicy;
  readonly #slots: Slot[];
  readonly #children = new Set<ChildProcess>();
  readonly #deaths: ServerDeath[] = [];
  #stopping = false;

  private constructor(options: FleetOptions) {
    this.#options = options;
    this.#policy = options.restartPolicy ?? DEFAULT_RESTART_POLICY;
    this.#slots = Array.from({ length: options.count }, (_, index) => ({
      index,
      name: `server-${index + 1}`,
      current: undefined,
      restarts: 0,
      timer: undefined,
    }));
  }

  /** Starts `count` servers at once and resolves when all listen; on any failure stops the ones that started. */
  static async start(options: FleetOptions): Promise<Fleet> {
    const fleet = new Fleet(options);
    const settled = await Promise.allSettled(fleet.#slots.map((slot) => fleet.#launch(slot)));
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed !== undefined) {
      await fleet.stop();
      throw failed.reason;
    }
    return fleet;
  }

  /** The servers running now, in fleet order (a server being restarted is missing). */
  get members(): readonly FleetMember[] {
    return this.#slots.flatMap((slot) => (slot.current === undefined ? [] : [slot.current]));
  }

  /** Servers of the fleet, up or not. */
  get size(): number {
    return this.#slots.length;
  }

  /** Servers running now. */
  get live(): number {
    return this.members.length;
  }

  /** Every unexpected death so far. */
  get deaths(): readonly ServerDeath[] {
    return this.#deaths;
  }

  /** Restarts so far, over the fleet. */
  get restarts(): number {
    return this.#slots.reduce((sum, slot) => sum + slot.restarts, 0);
  }

  /** Name of the server at `index`. */
  nameOf(index: number): string {
    return this.#slots[index]?.name ?? `server-${index + 1}`;
  }

  /** The base URL of the server at `index` while it runs; undefined while it is down. */
  urlOf(index: number): string | undefined {
    return this.#slots[index]?.current?.url;
  }

  /** SIGTERM to every server, SIGKILL to any still running after the grace period; resolves when all exited. */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const slot of this.#slots) clearTimeout(slot.timer);
    await Promise.all([...this.#children].map((child) => stopChild(child)));
  }

  /** SIGKILL to every server at once, for a second Ctrl-C. */
  kill(): void {
    this.#stopping = true;
    for (const slot of this.#slots) clearTimeout(slot.timer);
    for (const child of this.#children) if (isRunning(child)) child.kill('SIGKILL');
  }

  async #launch(slot: Slot): Promise<FleetMember> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    // Port 0: the server binds a free port itself and reports its endpoint when ready.
    if (this.#options.prometheus) env.OTEL_EXPORTER_PROMETHEUS_PORT = '0';
    const spawnTrace = this.#options.onSpawn?.(slot.name);
    Object.assign(env, spawnTrace?.env);
    const child = spawn(process.execPath, [SERVER_SCRIPT, '--name', slot.name, ...this.#options.serverArgs], {
      env,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    // An IPC write to a server that just died fails asynchronously; that death is reported by `exit`.
    child.on('error', () => {});
    pipeLines(child, (line) => this.#options.onLog(slot.name, line));
    let ready: ReadyMessage;
    try {
      ready = await waitForReady(child, slot.name);
    } catch (error) {
      spawnTrace?.end(false);
      throw error;
    }
    spawnTrace?.end(true);
    const member: FleetMember = { ...ready, child, index: slot.index, restart: slot.restarts };
    if (this.#stopping) return member;
    slot.current = member;
    child.once('exit', (code, signal) => {
      if (slot.current === member) slot.current = undefined;
      if (this.#stopping) return;
      const death: ServerDeath = {
        name: slot.name,
        index: slot.index,
        pid: member.pid,
        code,
        signal,
        at: new Date(),
        member,
      };
      this.#deaths.push(death);
      this.#options.onDeath(death, this.#scheduleRestart(slot));
    });
    return member;
  }

  /** Schedules the next restart of `slot`; returns its delay, or null when the budget is spent. */
  #scheduleRestart(slot: Slot): number | null {
    if (this.#stopping || slot.restarts >= this.#policy.budget) return null;
    const delay = Math.min(this.#policy.maxBackoffMs, this.#policy.initialBackoffMs * 2 ** slot.restarts);
    slot.restarts++;
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      if (this.#stopping) return;
      this.#launch(slot).then(
        (member) => {
          if (!this.#stopping) this.#options.onRestarted(member);
        },
        (error: unknown) => {
          if (this.#stopping) return;
          const retry = this.#scheduleRestart(slot);
          this.#options.onRestartFailed(slot.name, error instanceof Error ? error.message : String(error), retry);
        },
      );
    }, delay);
    return delay;
  }
}

function pipeLines(child: ChildProcess, onLine: (line: string) => void): void {
  let buffer = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trimEnd();
      if (line !== '') onLine(line);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
    }
    if (buffer.length > 8192) buffer = buffer.slice(-8192);
  });
}

function waitForReady(child: ChildProcess, name: string): Promise<ReadyMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      child.kill('SIGKILL');
      reject(new Error(`${name} did not report ready within ${READY_TIMEOUT_MS} ms`));
    }, READY_TIMEOUT_MS);
    const onMessage = (message: unknown): void => {
      if (typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'ready') {
        cleanup();
        resolve(message as ReadyMessage);
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      cleanup();
      reject(new Error(`${name} exited before it was ready (${signal ?? `code ${code}`})`));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(new Error(`${name} could not be started: ${error.message}`));
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      child.off('error', onError);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  await terminate(child, STOP_GRACE_MS);
  if (child.connected) child.disconnect();
}
