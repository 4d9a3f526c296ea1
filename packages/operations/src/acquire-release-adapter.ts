// Any object with `acquire()` (and `release()`), including async-mutex decorators such as
// `withTimeout()` and `tryAcquire()`, whose methods are own properties of a plain object: they
// keep their own semantics (a timeout or "already locked" rejects the operation before its
// body runs). Such a limit cannot withdraw a waiter, so a caller whose wait ends from outside
// (its signal, an admission deadline) is rejected at once, and the acquisition, when it comes,
// is released straight away.

import { describeValue } from '@gym/core';
import { unwatchAbort, watchAbort } from './abort-watch.js';
import type { Body, Cancellable, Held, Lifecycle, LimitAdapter, Tally } from './internal-types.js';
import { Measurement } from './measurement.js';
import { OperationContextImpl } from './operation-context.js';
import { reporter } from './report.js';
import { abortedAfterGrant, runMeasured, runUnmeasured } from './runners.js';
import type { AcquireReleaseLimit } from './types.js';

/** The token that means "call the limit's own `release()`". */
const USE_RELEASE_METHOD = Symbol('release()');

/** Entering an `acquire()`/`release()` object. */
export class AcquireReleaseAdapter implements LimitAdapter, Held {
  constructor(private readonly limit: AcquireReleaseLimit) {}

  runUnmeasured<T>(signal: AbortSignal | undefined, body: Body<T>, tally?: Tally): Promise<T> {
    if (signal === undefined) return tally === undefined ? this.runPlain(body) : this.runCounted(body, tally);
    return this.runWatched(signal, body);
  }

  /** The unmeasured fast path: what a user would write by hand around `acquire()`, and nothing else. */
  private async runPlain<T>(body: Body<T>): Promise<T> {
    const token = this.toToken(await this.limit.acquire());
    try {
      return await body(new OperationContextImpl(undefined));
    } finally {
      this.leave(token);
    }
  }

  /** The same, for a call whose metered limit counts it: plain integer moves, always paired. */
  private async runCounted<T>(body: Body<T>, tally: Tally): Promise<T> {
    tally.queued++;
    let token: unknown;
    try {
      token = this.toToken(await this.limit.acquire());
    } catch (reason) {
      tally.queued--;
      throw reason;
    }
    tally.queued--;
    tally.active++;
    try {
      return await body(new OperationContextImpl(undefined));
    } finally {
      try {
        this.leave(token);
      } finally {
        tally.active--;
      }
    }
  }

  private async runWatched<T>(signal: AbortSignal, body: Body<T>): Promise<T> {
    const token = await this.acquire(signal, undefined);
    if (abortedAfterGrant(signal)) {
      this.leave(token);
      throw signal.reason;
    }
    return runUnmeasured(this, token, signal, body);
  }

  async runMeasured<T>(signal: AbortSignal | undefined, body: Body<T>, life: Lifecycle): Promise<T> {
    life.asked();
    let token: unknown;
    try {
      // Our own Measurement never ends a wait, so without a signal nothing can: await directly.
      token =
        signal === undefined && life instanceof Measurement
          ? this.toToken(await this.limit.acquire())
          : await this.acquire(signal, life);
    } catch (reason) {
      life.gaveUp(reason);
      throw reason;
    }
    if (abortedAfterGrant(signal)) {
      this.leave(token);
      life.gaveUp(signal?.reason);
      throw signal?.reason;
    }
    life.held();
    return runMeasured(this, token, signal, body, life);
  }

  leave(token: unknown): void {
    if (token === USE_RELEASE_METHOD) this.limit.release!();
    else (token as () => void)();
  }

  /** Resolves the token to release with, or rejects (the limit refused, or the wait ended from outside). */
  private acquire(signal: AbortSignal | undefined, life: Lifecycle | undefined): Promise<unknown> {
    const acquisition = new Acquisition(this, signal);
    // Whether a slot is free cannot be known before `acquire()` answers, so every call "may wait".
    const refusal = life?.mustWait(acquisition, false);
    if (refusal !== undefined) return Promise.reject(refusal);
    return acquisition.wait(Promise.resolve(this.limit.acquire()).then(this.toToken));
  }

  /** What `acquire()` resolved, turned into a token; throws when there is no way to release. */
  private readonly toToken = (value: unknown): unknown => {
    if (typeof value === 'function') return value;
    if (Array.isArray(value) && typeof value[1] === 'function') return value[1];
    if (typeof this.limit.release === 'function') return USE_RELEASE_METHOD;
    throw new TypeError(
      `resourcesOperation: limit.acquire() resolved ${describeValue(value)}, which is not a release function ` +
        'nor [value, release], and the limit has no release() method; the limit cannot be released',
    );
  };
}

/** One wait on `acquire()` that can end from outside. */
class Acquisition implements Cancellable {
  private settled = false;
  private resolve: (token: unknown) => void = noop;
  private reject: (reason: unknown) => void = noop;

  constructor(
    private readonly adapter: AcquireReleaseAdapter,
    private readonly signal: AbortSignal | undefined,
  ) {}

  wait(acquiring: Promise<unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
      if (this.signal !== undefined) watchAbort(this.signal, this);
      acquiring.then(this.onAcquired, this.onRefused);
    });
  }

  onAbort(reason: unknown): void {
    this.cancel(reason);
  }

  cancel(reason: unknown): void {
    if (this.settled) return;
    this.settled = true;
    if (this.signal !== undefined) unwatchAbort(this.signal, this);
    this.reject(reason);
  }

  private readonly onAcquired = (token: unknown): void => {
    if (!this.settled) {
      this.settled = true;
      if (this.signal !== undefined) unwatchAbort(this.signal, this);
      this.resolve(token);
      return;
    }
    // The caller stopped waiting: give the acquisition straight back.
    try {
      this.adapter.leave(token);
    } catch (error) {
      reporter.warnOnce('late-release', 'releasing a limit acquired after its caller stopped waiting failed', error);
    }
  };

  private readonly onRefused = (reason: unknown): void => {
    if (this.settled) return;
    this.settled = true;
    if (this.signal !== undefined) unwatchAbort(this.signal, this);
    this.reject(reason);
  };
}

function noop(): void {}
