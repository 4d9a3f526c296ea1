// The orchestrator's health checks: `GET /healthz` on every running server about once a
// second. A process that is alive but makes no progress (stopped with SIGSTOP, its event loop
// blocked, its socket wedged) is as lost as a dead one, and only a check that expects an answer
// can tell: the exit watch never fires for it. A server that answers late is not that: a check
// past its deadline counts as missed, but it is kept open, and an answer that comes late still
// shows an event loop that moves. Past `hungAfterMs` without any answer, and after at least two
// missed checks in a row, a server is reported once, with the time of its last answer; its owner
// decides what to do (the orchestrator kills it, and the fleet restarts it).
//
// Every duration here is on the watcher's own running clock, not the wall clock: time during
// which the watcher itself did not run (the orchestrator stopped with SIGSTOP or Ctrl-Z, a long
// GC pause, a VM that was not scheduled) is nobody's silence. A check that such a pause fell into
// is not counted as missed, and after a pause the count of missed checks starts again: each check
// a verdict rests on had its full deadline of the watcher's own running time.

import { readFileSync } from 'node:fs';
import { waitOrAbort } from './deadline.js';
import type { FleetMember } from './fleet.js';

/** A server that stopped answering. */
export interface HungServer {
  readonly member: FleetMember;
  /** Wall-clock time of its last answer (or of the first check, when it never answered one). */
  readonly since: Date;
  /** Milliseconds without an answer when it was reported, on the watcher's running clock. */
  readonly silentMs: number;
  /**
   * CPU time (user + system) the process used since its last answer, in ms: about 0 for a stopped
   * process, more for a blocked event loop; undefined where `/proc` cannot tell.
   */
  readonly cpuMs: number | undefined;
}

/** How the watch checks. */
export interface HealthWatchOptions {
  /** The servers running now (read before every round). */
  readonly members: () => readonly FleetMember[];
  /** Called once per process that went `hungAfterMs` without an answer. */
  readonly onHung: (hung: HungServer) => void;
  /** Between two rounds (default 1 s). */
  readonly everyMs?: number;
  /** A check unanswered after this long is missed (default 2 s); it stays open for a late answer. */
  readonly deadlineMs?: number;
  /** Without an answer for this long (and two missed checks in a row), a server is hung (default 6 s). */
  readonly hungAfterMs?: number;
}

/** How often the running clock looks at the wall clock. */
const TICK_MS = 100;
/** Lateness of a tick beyond this is a pause of the watcher (its event loop did not run). */
const PAUSE_SLACK_MS = 100;

/**
 * The watcher's own running time: the monotonic clock minus the stretches in which this process's
 * event loop did not run. A tick every 100 ms; a tick late by more than 100 ms marks a pause of
 * its lateness. A pause under way (the process just resumed, the tick has not run yet) is counted
 * already, so a check judged before that tick does not take the pause for a server's silence.
 */
export class RunningClock {
  #last = performance.now();
  #paused = 0;
  #pauses = 0;
  #timer: NodeJS.Timeout | undefined;

  start(): void {
    this.#last = performance.now();
    this.#timer ??= setInterval(() => {
      const now = performance.now();
      const late = this.#lateness(now);
      if (late > 0) {
        this.#paused += late;
        this.#pauses++;
      }
      this.#last = now;
    }, TICK_MS).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Milliseconds of running time (an origin of its own; only differences mean something). */
  now(): number {
    const now = performance.now();
    return now - this.#paused - this.#lateness(now);
  }

  /** Pauses seen so far, one under way included. */
  get pauses(): number {
    return this.#pauses + (this.#lateness(performance.now()) > 0 ? 1 : 0);
  }

  #lateness(now: number): number {
    const late = now - this.#last - TICK_MS;
    return late > PAUSE_SLACK_MS ? late : 0;
  }
}

/** CPU time (user + system) of a process in ms, from /proc; undefined where it cannot be read. */
function cpuTimeMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the line, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

interface Check {
  /** Running time when it was sent. */
  readonly sentAt: number;
  /** The clock's pause count when it was sent. */
  readonly pauses: number;
  readonly abort: AbortController;
  /** Past its deadline (judged once). */
  missed: boolean;
}

interface Watched {
  /** Running time of the last answer (or of the first check). */
  lastAnswer: number;
  lastAnswerAt: Date;
  /** CPU time of the process at its last answer. */
  cpuAtAnswer: number | undefined;
  answering: boolean;
  reported: boolean;
  /** Missed checks in a row, each with its full deadline of running time. */
  missed: number;
  /** The clock's pause count when this server was last judged. */
  pauses: number;
  /** Checks still open: the newest is under its deadline, older ones wait for a late answer. */
  readonly open: Set<Check>;
}

/** Health checks of the fleet, from `start()` until `stop()`. */
export class HealthWatch {
  readonly #options: HealthWatchOptions;
  readonly #byPid = new Map<number, Watched>();
  readonly #stop = new AbortController();
  readonly #clock = new RunningClock();
  #loop: Promise<void> | undefined;

  constructor(options: HealthWatchOptions) {
    this.#options = options;
  }

  /** Servers running now whose last check was answered in time (a server not checked yet counts as answering). */
  get answering(): number {
    return this.#options.members().filter((member) => this.#byPid.get(member.pid)?.answering ?? true).length;
  }

  /** Starts the rounds. */
  start(): void {
    this.#clock.start();
    this.#loop ??= (async () => {
      while (!this.#stop.signal.aborted) {
        this.#round();
        await waitOrAbort(this.#options.everyMs ?? 1_000, this.#stop.signal);
      }
    })();
  }

  /** Stops the rounds and abandons the open checks. */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#clock.stop();
    for (const watched of this.#byPid.values()) for (const check of watched.open) check.abort.abort();
    await this.#loop;
  }

  #round(): void {
    const members = this.#options.members();
    const live = new Set(members.map((member) => member.pid));
    for (const [pid, watched] of this.#byPid) {
      if (live.has(pid)) continue;
      for (const check of watched.open) check.abort.abort();
      this.#byPid.delete(pid);
    }
    for (const member of members) this.#judge(member);
  }

  #judge(member: FleetMember): void {
    const deadlineMs = this.#options.deadlineMs ?? 2_000;
    const hungAfterMs = this.#options.hungAfterMs ?? 6_000;
    const now = this.#clock.now();
    const pauses = this.#clock.pauses;
    let watched = this.#byPid.get(member.pid);
    if (watched === undefined) {
      watched = {
        lastAnswer: now,
        lastAnswerAt: new Date(),
        cpuAtAnswer: cpuTimeMs(member.pid),
        answering: true,
        reported: false,
        missed: 0,
        pauses,
        open: new Set(),
      };
      this.#byPid.set(member.pid, watched);
    }
    // After a pause of the watcher, nothing missed before counts: check again from scratch.
    if (pauses !== watched.pauses) {
      watched.pauses = pauses;
      watched.missed = 0;
    }
    let pending = false;
    for (const check of watched.open) {
      if (check.missed) {
        // Kept open for a late answer; given up once that would no longer change a verdict.
        if (now - check.sentAt > hungAfterMs + deadlineMs) {
          check.abort.abort();
          watched.open.delete(check);
        }
        continue;
      }
      if (now - check.sentAt < deadlineMs) {
        pending = true;
        continue;
      }
      check.missed = true;
      watched.answering = false;
      // A check that a pause of the watcher fell into did not have its full deadline.
      if (check.pauses === pauses) watched.missed++;
    }
    if (!watched.reported && watched.missed >= 2 && now - watched.lastAnswer >= hungAfterMs) {
      watched.reported = true;
      for (const check of watched.open) check.abort.abort();
      watched.open.clear();
      const cpu = cpuTimeMs(member.pid);
      this.#options.onHung({
        member,
        since: watched.lastAnswerAt,
        silentMs: now - watched.lastAnswer,
        cpuMs: cpu === undefined || watched.cpuAtAnswer === undefined ? undefined : cpu - watched.cpuAtAnswer,
      });
      return;
    }
    if (!pending && !watched.reported) this.#send(member, watched, now, pauses);
  }

  #send(member: FleetMember, watched: Watched, sentAt: number, pauses: number): void {
    const check: Check = { sentAt, pauses, abort: new AbortController(), missed: false };
    watched.open.add(check);
    const signal = AbortSignal.any([check.abort.signal, this.#stop.signal]);
    void (async () => {
      let answered = false;
      try {
        const response = await fetch(`${member.url}/healthz`, { signal });
        await response.arrayBuffer();
        answered = response.ok;
      } catch {
        // refused, reset, or abandoned
      }
      // A failed check stays open until its deadline, then counts as missed like a silent one.
      if (!answered || this.#stop.signal.aborted || watched.reported) return;
      watched.open.delete(check);
      // An answer, in time or late: the server's event loop moves.
      watched.lastAnswer = this.#clock.now();
      watched.lastAnswerAt = new Date();
      watched.cpuAtAnswer = cpuTimeMs(member.pid);
      watched.answering = true;
      watched.missed = 0;
    })();
  }
}
