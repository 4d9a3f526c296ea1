// The orchestrator's health checks: `GET /healthz` on every running server about once a
// second, each with a deadline. A process that is alive but does not answer (stopped with
// SIGSTOP, its event loop blocked, its socket wedged) is as lost as a dead one, and only a
// check that expects an answer can tell: the exit watch never fires for it. Past
// `hungAfterMs` without an answer a server is reported once, with the time of its last answer;
// its owner decides what to do (the orchestrator kills it, and the fleet restarts it).

import { waitOrAbort } from './deadline.js';
import type { FleetMember } from './fleet.js';

/** A server that stopped answering. */
export interface HungServer {
  readonly member: FleetMember;
  /** Wall-clock time of its last answer (or of the first check, when it never answered one). */
  readonly since: Date;
  /** Milliseconds without an answer when it was reported. */
  readonly silentMs: number;
}

/** How the watch checks. */
export interface HealthWatchOptions {
  /** The servers running now (read before every round). */
  readonly members: () => readonly FleetMember[];
  /** Called once per process that went `hungAfterMs` without an answer. */
  readonly onHung: (hung: HungServer) => void;
  /** Between two rounds (default 1 s). */
  readonly everyMs?: number;
  /** Each check is abandoned after this long (default 2 s). */
  readonly deadlineMs?: number;
  /** Without an answer for this long, a server is hung (default 6 s). */
  readonly hungAfterMs?: number;
}

interface Watched {
  lastAnswer: number;
  lastAnswerAt: Date;
  answering: boolean;
  reported: boolean;
}

/** Health checks of the fleet, from `start()` until `stop()`. */
export class HealthWatch {
  readonly #options: HealthWatchOptions;
  readonly #byPid = new Map<number, Watched>();
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(options: HealthWatchOptions) {
    this.#options = options;
  }

  /** Servers running now whose last check was answered (a server not checked yet counts as answering). */
  get answering(): number {
    return this.#options.members().filter((member) => this.#byPid.get(member.pid)?.answering ?? true).length;
  }

  /** Starts the rounds. */
  start(): void {
    this.#loop ??= (async () => {
      while (!this.#stop.signal.aborted) {
        await this.#round();
        await waitOrAbort(this.#options.everyMs ?? 1_000, this.#stop.signal);
      }
    })();
  }

  /** Stops the rounds; resolves when the current one ended. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  async #round(): Promise<void> {
    const members = this.#options.members();
    const live = new Set(members.map((member) => member.pid));
    for (const pid of this.#byPid.keys()) if (!live.has(pid)) this.#byPid.delete(pid);
    await Promise.all(members.map((member) => this.#check(member)));
  }

  async #check(member: FleetMember): Promise<void> {
    let watched = this.#byPid.get(member.pid);
    if (watched === undefined) {
      watched = { lastAnswer: performance.now(), lastAnswerAt: new Date(), answering: true, reported: false };
      this.#byPid.set(member.pid, watched);
    }
    const deadlineMs = this.#options.deadlineMs ?? 2_000;
    let answered = false;
    try {
      const signal = AbortSignal.any([AbortSignal.timeout(deadlineMs), this.#stop.signal]);
      const response = await fetch(`${member.url}/healthz`, { signal });
      await response.arrayBuffer();
      answered = response.ok;
    } catch {
      // no answer within the deadline, or refused
    }
    if (this.#stop.signal.aborted) return;
    if (answered) {
      watched.lastAnswer = performance.now();
      watched.lastAnswerAt = new Date();
      watched.answering = true;
      return;
    }
    watched.answering = false;
    const silentMs = performance.now() - watched.lastAnswer;
    if (watched.reported || silentMs < (this.#options.hungAfterMs ?? 6_000)) return;
    watched.reported = true;
    this.#options.onHung({ member, since: watched.lastAnswerAt, silentMs });
  }
}
