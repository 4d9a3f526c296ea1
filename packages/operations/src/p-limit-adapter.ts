// p-limit runs the function it is given when a slot is free, and cannot withdraw one queued
// function (only `clearQueue()`, which drops them all). An operation with a signal that waited
// inside p-limit and then aborted would stay there as an empty shell: counted by `pendingCount`,
// taking its turn, and, 1,000 aborts later, keeping the next real call behind 1,000 shells.
//
// So operations wait here, FIFO, in our own line, and p-limit is handed a function only when it
// starts it at once (p-limit 7 marks it active synchronously when a slot is free), or as a
// *place*: when p-limit starts a place, it takes whoever is first in our line at that moment (a
// waiter that aborted in between is simply not there), or returns at once if nobody is. A waiter
// that aborts, or whose admission deadline passes, leaves our line in O(1); p-limit never heard
// of it. While someone waits in our line every new operation queues behind them, so nobody
// overtakes; once waiters run, a slot passes from one to the next inside one p-limit call, with
// no gap in which it is free.
//
// The unmeasured fast path (no signal, an empty line) hands the body straight to p-limit and
// reads nothing of the limiter (its getters, on a function object, would cost more than the
// rest of the path): such an operation can never become a shell, so it may wait in p-limit's own
// queue like a bare call, and it is not followed to its end. Measured operations are handed over
// only when p-limit starts them at once, and followed by one `then` on p-limit's own promise,
// which settles after p-limit has freed the slot; places and the slot hand-over are followed too.
// Ends of followed work let our line in. When someone waits in our line while nothing of ours
// that is followed holds a slot (the slots are held by fast-path operations or by others' direct
// calls), the line looks again every millisecond until a slot is free: nothing is ever put into
// p-limit's queue that could outlive its waiter.
//
// A limiter without a `concurrency` property (before p-limit 6) is treated as unbounded here:
// places are handed over at once and wait in p-limit's queue.

import { unwatchAbort, watchAbort } from './abort-watch.js';
import type { Body, Cancellable, Held, Lifecycle, LimitAdapter, Tally } from './internal-types.js';
import { OperationContextImpl } from './operation-context.js';
import { reporter } from './report.js';
import { NOTHING_HELD, runMeasured, runUnmeasured } from './runners.js';
import type { PLimitLike } from './types.js';
import { type InLine, WaitLine } from './wait-line.js';

/** One operation waiting in our line. */
// biome-ignore lint/suspicious/noExplicitAny: a waiter's result type is erased once it is in the line
class Waiter<T = any> implements Cancellable, InLine {
  prev: InLine | undefined = undefined;
  next: InLine | undefined = undefined;
  queued = false;

  constructor(
    private readonly adapter: PLimitAdapter,
    readonly signal: AbortSignal | undefined,
    readonly body: Body<T>,
    readonly life: Lifecycle | undefined,
    readonly tally: Tally | undefined,
    readonly resolve: (value: T) => void,
    readonly reject: (reason: unknown) => void,
  ) {}

  onAbort(reason: unknown): void {
    this.adapter.abandon(this, reason);
  }

  cancel(reason: unknown): void {
    this.adapter.abandon(this, reason);
  }

  /** Runs the body in a slot of ours; `held` hears when it ends. Settles as the body does. */
  start(held: Held): Promise<T> {
    const life = this.life;
    let running: Promise<T>;
    if (life === undefined) {
      const tally = this.tally;
      if (tally !== undefined) {
        tally.queued--;
        tally.active++;
      }
      running = runUnmeasured(held, undefined, this.signal, this.body, this.tally);
    } else {
      life.held();
      running = runMeasured(held, undefined, this.signal, this.body, life);
    }
    running.then(this.resolve, this.reject);
    return running;
  }
}

/** A function handed to p-limit that, when started, runs whoever is first in our line. */
class Place {
  started = false;

  constructor(readonly adapter: PLimitAdapter) {}

  /** p-limit freed the place's slot. */
  readonly onFreed = (): void => {
    this.adapter.slotFreed();
  };

  /** p-limit rejected the place without starting it: `clearQueue()` with `rejectOnClear`. */
  readonly onRejected = (reason: unknown): void => {
    if (this.started) this.adapter.slotFreed();
    else this.adapter.placeDropped(reason);
  };
}

function runPlace(place: Place): Promise<void> | undefined {
  place.started = true;
  return place.adapter.startFirst();
}

/** A call that a Tally counts, handed straight to p-limit. */
class CountedRun<T> {
  started = false;

  constructor(
    readonly adapter: PLimitAdapter,
    readonly body: Body<T>,
    readonly tally: Tally,
  ) {}

  /** p-limit settled the call (and freed its slot), or dropped it unstarted (`clearQueue()` with `rejectOnClear`). */
  readonly settled = (): void => {
    if (this.started) this.tally.active--;
    else this.tally.queued--;
  };
}

function runCounted<T>(run: CountedRun<T>): PromiseLike<T> | T {
  run.started = true;
  run.tally.queued--;
  run.tally.active++;
  return run.body(new OperationContextImpl(undefined));
}

/** The measured fast path: the slot is ours once p-limit calls this. */
function runDirectMeasured<T>(body: Body<T>, life: Lifecycle): Promise<T> {
  life.held();
  return runMeasured(NOTHING_HELD, undefined, undefined, body, life);
}

/** Our FIFO line in front of one p-limit limiter. */
export class PLimitAdapter implements LimitAdapter {
  private readonly line = new WaitLine<Waiter>();
  /** Places handed to p-limit that have not started yet. */
  private placed = 0;
  /** Our operations in p-limit that are followed to their end: each end lets our line in. */
  private inside = 0;

  constructor(private readonly limiter: PLimitLike) {}

  runUnmeasured<T>(signal: AbortSignal | undefined, body: Body<T>, tally?: Tally): Promise<T> {
    if (signal !== undefined || this.line.head !== undefined) return this.queue(signal, body, undefined, tally);
    // The body itself, and its `op`: p-limit calls `body(op)`, no frame of ours in between.
    if (tally === undefined) return this.limiter(body, new OperationContextImpl(undefined));
    return this.runCountedDirect(body, tally);
  }

  /** The fast path for a call a Tally counts; apart, so that the plain fast path stays small enough to inline. */
  private runCountedDirect<T>(body: Body<T>, tally: Tally): Promise<T> {
    const run = new CountedRun(this, body, tally);
    tally.queued++;
    let started: Promise<T>;
    try {
      started = this.limiter(runCounted, run) as Promise<T>;
    } catch (error) {
      tally.queued--;
      throw error;
    }
    started.then(run.settled, run.settled);
    return started;
  }

  runMeasured<T>(signal: AbortSignal | undefined, body: Body<T>, life: Lifecycle): Promise<T> {
    life.asked();
    let now: boolean;
    try {
      now = signal === undefined && this.line.head === undefined && this.hasFreeSlot();
    } catch (error) {
      life.gaveUp(error);
      throw error;
    }
    if (!now) return this.queue(signal, body, life, undefined);
    this.inside++;
    let started: Promise<T>;
    try {
      started = this.limiter(runDirectMeasured, body, life);
    } catch (error) {
      this.inside--;
      life.gaveUp(error);
      throw error;
    }
    started.then(this.ended, this.ended);
    return started;
  }

  /** Operations waiting in our line now. */
  get waiting(): number {
    return this.line.size;
  }

  /** Places of ours in p-limit's queue now (they stand for waiters of our line). */
  get placesQueued(): number {
    return this.placed;
  }

  /** A followed operation ended and p-limit has freed its slot. */
  private readonly ended = (): void => {
    this.inside--;
    if (this.line.size > this.placed) this.handOver();
  };

  /** A place's slot was freed by p-limit: let the line in if a slot is free now. */
  slotFreed(): void {
    if (this.line.size > this.placed) this.handOver();
  }

  /** A wait ended from outside (its signal, its admission deadline): it leaves the line and rejects. */
  abandon(waiter: Waiter, reason: unknown): void {
    if (!waiter.queued) return;
    this.unlink(waiter);
    waiter.life?.gaveUp(reason);
    if (waiter.tally !== undefined) waiter.tally.queued--;
    waiter.reject(reason);
  }

  /** p-limit started one of our places: the first in line runs now, or nobody does. */
  startFirst(): Promise<void> | undefined {
    this.placed--;
    const first = this.line.head;
    if (first === undefined) return undefined; // everyone left: p-limit frees the slot at once
    this.unlink(first);
    this.inside++;
    // p-limit has freed what made room for this place; maybe more (a raised concurrency).
    if (this.line.head !== undefined) this.handOver();
    return this.runSlot(first);
  }

  /** `clearQueue()` with `rejectOnClear` dropped a place: it dropped our line too, as it would have. */
  placeDropped(reason: unknown): void {
    this.placed--;
    for (let first = this.line.head; first !== undefined; first = this.line.head) this.abandon(first, reason);
  }

  /**
   * Runs waiters one after another in one p-limit slot: when one ends and someone waits, the
   * slot passes on directly, unless entries queued in p-limit before ours are owed it or the
   * concurrency was lowered below what runs.
   */
  private async runSlot(first: Waiter): Promise<void> {
    for (let waiter: Waiter | undefined = first; waiter !== undefined; waiter = this.nextInSlot()) {
      try {
        await waiter.start(this.slotHeld);
      } catch {
        // The waiter's caller has the error.
      }
    }
  }

  /** The waiter that takes over the slot just left, or `undefined` to give the slot back. */
  private nextInSlot(): Waiter | undefined {
    const first = this.line.head;
    if (first === undefined) return undefined;
    try {
      const limiter = this.limiter;
      if (limiter.pendingCount - this.placed > 0 || limiter.activeCount > capacityOf(limiter)) return undefined;
    } catch {
      this.handOver(); // reports and rejects the line
      return undefined;
    }
    this.unlink(first);
    this.inside++;
    // Slots that others left free meanwhile (work we do not follow, a raised concurrency).
    if (this.line.head !== undefined) this.handOver();
    return first;
  }

  /** What a waiter running in a slot of ours tells when it ends: the slot stays ours. */
  private readonly slotHeld: Held = {
    leave: () => {
      this.inside--;
    },
  };

  private queue<T>(
    signal: AbortSignal | undefined,
    body: Body<T>,
    life: Lifecycle | undefined,
    tally: Tally | undefined,
  ): Promise<T> {
    if (tally !== undefined) tally.queued++;
    return new Promise<T>((resolve, reject) => {
      const waiter = new Waiter<T>(this, signal, body, life, tally, resolve, reject);
      let refusal: Error | undefined;
      try {
        if (life !== undefined && !(this.line.head === undefined && this.hasFreeSlot())) {
          refusal = life.mustWait(waiter, true);
        }
      } catch (error) {
        refusal = error as Error; // a limiter whose getters throw
      }
      if (refusal !== undefined) {
        life?.gaveUp(refusal);
        if (tally !== undefined) tally.queued--;
        reject(refusal);
        return;
      }
      this.line.push(waiter);
      if (signal !== undefined) watchAbort(signal, waiter);
      this.handOver();
    });
  }

  /** p-limit would start a function handed to it now. */
  private hasFreeSlot(): boolean {
    const limiter = this.limiter;
    return limiter.pendingCount === 0 && limiter.activeCount < capacityOf(limiter);
  }

  /**
   * Hands p-limit as many places as it has free slots, for waiters that have none yet; when
   * someone still waits with no place while nothing followed of ours holds a slot, looks again soon.
   */
  private handOver(): void {
    try {
      const limiter = this.limiter;
      let room = capacityOf(limiter) - limiter.activeCount - limiter.pendingCount;
      for (; this.line.size > this.placed && room > 0; room--) this.place();
    } catch (error) {
      reporter.warnOnce('p-limit', 'reading the p-limit limiter failed; its waiting operations were rejected', error);
      for (let first = this.line.head; first !== undefined; first = this.line.head) this.abandon(first, error);
      return;
    }
    if (this.line.size > this.placed && this.placed === 0 && this.inside === 0) this.lookAgainSoon();
  }

  private polling = false;

  /** Nothing followed will end to let the line in: look again in a millisecond (never keeps the process alive). */
  private lookAgainSoon(): void {
    if (this.polling) return;
    this.polling = true;
    const timer = setTimeout(this.lookAgain, 1);
    timer.unref?.();
  }

  private readonly lookAgain = (): void => {
    this.polling = false;
    if (this.line.size > this.placed) this.handOver();
  };

  private place(): void {
    const place = new Place(this);
    this.placed++;
    let started: Promise<unknown>;
    try {
      started = this.limiter(runPlace, place);
    } catch (error) {
      this.placeDropped(error);
      return;
    }
    started.then(place.onFreed, place.onRejected);
  }

  private unlink(waiter: Waiter): void {
    this.line.remove(waiter);
    if (waiter.signal !== undefined) unwatchAbort(waiter.signal, waiter);
  }
}

/** The limiter's concurrency, read live; unbounded for a limiter that does not say. */
export function capacityOf(limiter: PLimitLike): number {
  const concurrency = limiter.concurrency;
  return typeof concurrency === 'number' ? concurrency : Number.POSITIVE_INFINITY;
}
