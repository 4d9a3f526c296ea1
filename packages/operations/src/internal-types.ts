// The contracts between the parts of this package, apart from every implementation, so that no
// adapter imports the registry that builds it. Nothing here is re-exported from the package.
//
// `LimitAdapter` and `Lifecycle` are also the contract between two copies of this package in
// one process (an install that did not deduplicate it): a metered limit made by one copy hands
// its adapter to the other copy's `resourcesOperation` under a versioned symbol, and that copy
// passes its own Lifecycle in. So within version 1 they are only ever extended, never changed.

import type { Outcome } from '@gym/constants';
import type { OperationContext } from './types.js';

/** The body of an operation: what runs while the limit is held. */
export type Body<T> = (op: OperationContext) => PromiseLike<T> | T;

/** A wait that can be ended from outside (the caller's signal, an admission deadline). */
export interface Cancellable {
  /** Ends the wait with `reason`, if it is still waiting: the caller is rejected with `reason`. */
  cancel(reason: unknown): void;
}

/**
 * What happens to one operation at its limit, in order: `asked`, then (`mustWait`), then either
 * `held` … `ended`, or `gaveUp`. Told by the adapter; every method is total (never throws).
 */
export interface Lifecycle {
  /** The operation asks its limit. */
  asked(): void;
  /**
   * The operation cannot have a slot now and is about to wait. Returns an error to refuse it at
   * once (it never waits; `gaveUp` follows with that error), or `undefined` to let it wait; may
   * keep `wait` to end it later (an admission deadline). `certain` is false where the limit cannot
   * tell synchronously whether a slot is free (acquire()/release() objects).
   */
  mustWait(wait: Cancellable, certain: boolean): Error | undefined;
  /** The operation holds a slot; its body starts now. */
  held(): void;
  /** The operation stopped waiting without running its body, because of `reason`. */
  gaveUp(reason: unknown): void;
  /** The body ended with `outcome` and the slot was given back. */
  ended(outcome: Outcome): void;
}

/**
 * The two live counts of a metered limit that counts its own calls (its `LimitCell`), moved as
 * plain integers with no per-operation state: how such a limit counts calls that need nothing
 * else (no signal, no admission control) on the unmeasured path. Passed only with no signal,
 * and only by a metered limit to the adapter of the limit it wraps (both of one copy of this
 * package). The moves, always paired: a call asks (`queued++`), then holds (`queued--`,
 * `active++`) and ends (`active--`), or stops waiting without holding (`queued--`).
 */
export interface Tally {
  /** Calls waiting for a slot now. */
  queued: number;
  /** Calls holding a slot now. */
  active: number;
}

/** How one kind of limit is entered: once without telling anyone, once telling a Lifecycle. */
export interface LimitAdapter {
  /**
   * Enters the limit, runs the body, leaves. Reads no clock and moves no count, except the plain
   * integers of `tally` when one is given (only ever without a signal, and never by another copy).
   */
  runUnmeasured<T>(signal: AbortSignal | undefined, body: Body<T>, tally?: Tally): Promise<T>;
  /** The same, telling `life` every step. */
  runMeasured<T>(signal: AbortSignal | undefined, body: Body<T>, life: Lifecycle): Promise<T>;
}

/** Gives a held slot back. */
export interface Held {
  /** Releases what `token` stands for. Called exactly once per slot held. */
  leave(token: unknown): void;
}

/**
 * The property under which a limit made by this package (a metered limit) offers its own
 * adapter. `Symbol.for`, so a second copy of the package recognises it too.
 */
export const LIMIT_ADAPTER: unique symbol = Symbol.for('@gym/operations/limit-adapter@1') as never;
