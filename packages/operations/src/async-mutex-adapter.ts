// async-mutex 0.5 cannot withdraw one waiter: `cancel()` rejects every waiter, and a plain
// `acquire()` that the caller stops awaiting still takes a slot when its turn comes (and holds
// back everyone behind it until someone notices and releases). So waiters never queue inside
// the semaphore. They queue here, FIFO, in a doubly linked list; the adapter calls `acquire()`
// only when the semaphore grants it synchronously (it does whenever it is unlocked and its own
// queue is empty), and a waiter that aborts (or whose admission deadline passes) unlinks itself
// in O(1) — the semaphore never knew about it. One `waitForUnlock()` per adapter, never per
// waiter, wakes it when someone else releases; its own releases hand the slot on synchronously.

import { unwatchAbort, watchAbort } from './abort-watch.js';
import type { Body, Cancellable, Held, Lifecycle, LimitAdapter, Tally } from './internal-types.js';
import { abortedAfterGrant, runMeasured, runUnmeasured } from './runners.js';
import type { MutexLike, SemaphoreLike } from './types.js';
import { type InLine, WaitLine } from './wait-line.js';

/** One caller waiting for a slot. */
class Waiter implements Cancellable, InLine {
  prev: InLine | undefined = undefined;
  next: InLine | undefined = undefined;
  queued = false;

  constructor(
    private readonly adapter: AsyncMutexAdapter,
    readonly resolve: () => void,
    readonly reject: (reason: unknown) => void,
    readonly signal: AbortSignal | undefined,
  ) {}

  /** The signal aborted while waiting. */
  onAbort(reason: unknown): void {
    this.adapter.abandon(this, reason);
  }

  /** An admission deadline (or anyone holding this wait) ends it. */
  cancel(reason: unknown): void {
    this.adapter.abandon(this, reason);
  }
}

/** A FIFO line in front of one async-mutex `Semaphore` or `Mutex`. */
export class AsyncMutexAdapter implements LimitAdapter, Held {
  private readonly line = new WaitLine<Waiter>();
  /** A `waitForUnlock()` of this adapter is outstanding. */
  private armed = false;
  /**
   * One of our operations holds the Mutex. Nobody else can release it then, so our own `leave()`
   * is the only wake-up needed and no `waitForUnlock()` is armed (one promise less per hand-off
   * under contention). Not tracked for semaphores: another user may free a unit at any time.
   */
  private holdsMutex = false;
  /** An `acquire()` of ours is queued inside the semaphore (behind a heavier waiter of someone else). */
  private pending = false;

  constructor(
    private readonly limit: SemaphoreLike | MutexLike,
    /** `getValue()` exists: a counting semaphore, where "granted at once" is read from the value. */
    private readonly counting: boolean,
  ) {}

  runUnmeasured<T>(signal: AbortSignal | undefined, body: Body<T>, tally?: Tally): Promise<T> {
    if (tally === undefined) {
      const waiting = this.enter(signal, undefined);
      if (waiting === undefined) return runUnmeasured(this, undefined, signal, body);
      return this.waitThenRunUnmeasured(waiting, signal, body, undefined);
    }
    tally.queued++;
    let waiting: Promise<void> | undefined;
    try {
      waiting = this.enter(signal, undefined);
    } catch (error) {
      tally.queued--;
      throw error;
    }
    if (waiting === undefined) {
      tally.queued--;
      tally.active++;
      return runUnmeasured(this, undefined, signal, body, tally);
    }
    return this.waitThenRunUnmeasured(waiting, signal, body, tally);
  }

  runMeasured<T>(signal: AbortSignal | undefined, body: Body<T>, life: Lifecycle): Promise<T> {
    life.asked();
    let waiting: Promise<void> | undefined;
    try {
      waiting = this.enter(signal, life);
    } catch (error) {
      life.gaveUp(error); // a look-alike whose isLocked()/acquire() throws: no count may leak
      throw error;
    }
    if (waiting === undefined) {
      life.held();
      return runMeasured(this, undefined, signal, body, life);
    }
    return this.waitThenRunMeasured(waiting, signal, body, life);
  }

  // One async frame per waiting operation (no `.then` closure and no promise adoption on top).
  private async waitThenRunUnmeasured<T>(
    waiting: Promise<void>,
    signal: AbortSignal | undefined,
    body: Body<T>,
    tally: Tally | undefined,
  ): Promise<T> {
    try {
      await waiting;
    } catch (reason) {
      if (tally !== undefined) tally.queued--;
      throw reason;
    }
    if (abortedAfterGrant(signal)) {
      this.leave();
      if (tally !== undefined) tally.queued--;
      throw signal?.reason;
    }
    if (tally !== undefined) {
      tally.queued--;
      tally.active++;
    }
    return await runUnmeasured(this, undefined, signal, body, tally);
  }

  private async waitThenRunMeasured<T>(
    waiting: Promise<void>,
    signal: AbortSignal | undefined,
    body: Body<T>,
    life: Lifecycle,
  ): Promise<T> {
    try {
      await waiting;
    } catch (reason) {
      life.gaveUp(reason);
      throw reason;
    }
    if (abortedAfterGrant(signal)) {
      this.leave();
      life.gaveUp(signal?.reason);
      throw signal?.reason;
    }
    life.held();
    return await runMeasured(this, undefined, signal, body, life);
  }

  /** Waiters in this line now (tests use it to prove that aborted waiters leave). */
  get waiting(): number {
    return this.line.size;
  }

  /**
   * Takes a slot. Returns `undefined` when the caller holds it already, else a promise that
   * resolves when it does, or rejects (the signal aborted, `life` refused or cancelled the wait).
   */
  private enter(signal: AbortSignal | undefined, life: Lifecycle | undefined): Promise<void> | undefined {
    if (this.line.head === undefined && !this.pending && this.take()) return undefined;
    return new Promise<void>((resolve, reject) => {
      const waiter = new Waiter(this, resolve, reject, signal);
      const refusal = life?.mustWait(waiter, true);
      if (refusal !== undefined) {
        reject(refusal);
        return;
      }
      this.line.push(waiter);
      if (signal !== undefined) watchAbort(signal, waiter);
      this.arm();
    });
  }

  /** Gives the slot back; if a waiter is next and the slot is still free, hands it on now. */
  leave(): void {
    this.holdsMutex = false;
    this.limit.release();
    if (this.line.head !== undefined) this.pump();
  }

  /** A waiter's wait ended from outside: it leaves the line and its caller is rejected. */
  abandon(waiter: Waiter, reason: unknown): void {
    if (!waiter.queued) return;
    this.unlink(waiter);
    if (waiter.signal !== undefined) unwatchAbort(waiter.signal, waiter);
    waiter.reject(reason);
  }

  /** Tries to take one slot synchronously. */
  private take(): boolean {
    const limit = this.limit;
    if (limit.isLocked()) return false;
    if (this.counting) {
      const before = (limit as SemaphoreLike).getValue();
      const acquiring = limit.acquire();
      if ((limit as SemaphoreLike).getValue() < before) return true;
      this.wait(acquiring);
      return false;
    }
    const acquiring = limit.acquire();
    if (limit.isLocked()) {
      this.holdsMutex = true;
      return true;
    }
    this.wait(acquiring);
    return false;
  }

  /**
   * Our `acquire()` went into the semaphore's own queue (someone else holds a place with a larger
   * weight or a higher priority). We own that place: when it is granted it goes to whoever is
   * first in our line then, or straight back if nobody is.
   */
  private wait(acquiring: Promise<unknown>): void {
    this.pending = true;
    acquiring.then(this.onGranted, this.onRefused);
  }

  private readonly onGranted = (): void => {
    this.pending = false;
    const first = this.line.head;
    if (first === undefined) {
      this.limit.release();
    } else {
      this.holdsMutex = !this.counting;
      this.grant(first);
    }
    this.pump();
  };

  private readonly onRefused = (): void => {
    // `cancel()` rejected our place in the semaphore's queue; our waiters are not affected
    // (they abort through their own signals), so try again.
    this.pending = false;
    this.pump();
  };

  /** Hands free slots to waiters in order, then sleeps on one `waitForUnlock()` if any are left. */
  private pump(): void {
    while (this.line.head !== undefined && !this.pending && this.take()) {
      // Read the head again: `take()` may have run code (a look-alike's acquire) that ended a wait.
      const first = this.line.head;
      if (first === undefined) {
        this.holdsMutex = false;
        this.limit.release();
        break;
      }
      this.grant(first);
    }
    this.arm();
  }

  private arm(): void {
    if (this.line.head === undefined || this.pending || this.armed || this.holdsMutex) return;
    this.armed = true;
    let unlocked: Promise<void>;
    try {
      unlocked = this.limit.waitForUnlock();
    } catch (error) {
      this.onUnlockFailed(error);
      return;
    }
    unlocked.then(this.onUnlocked, this.onUnlockFailed);
  }

  private readonly onUnlocked = (): void => {
    this.armed = false;
    this.pump();
  };

  private readonly onUnlockFailed = (reason: unknown): void => {
    // Not something async-mutex does; a look-alike that does it fails its waiters rather than spin.
    this.armed = false;
    for (let first = this.line.head; first !== undefined; first = this.line.head) this.abandon(first, reason);
  };

  private grant(waiter: Waiter): void {
    this.unlink(waiter);
    if (waiter.signal !== undefined) unwatchAbort(waiter.signal, waiter);
    waiter.resolve();
  }

  private unlink(waiter: Waiter): void {
    this.line.remove(waiter);
  }
}
