// Running the body once its slot is held, in the two shapes every adapter shares: unmeasured
// (run, leave) and measured (run, leave, tell the Lifecycle how it ended). The outcome rule
// lives here and only here: what the body set through `op.outcome`, else `ok` on return, else
// `cancelled` when the signal had aborted or the error is an AbortError, else `error`. The
// body's result or error always passes through unchanged.

import type { Outcome } from '@gym/constants';
import type { Body, Held, Lifecycle, Tally } from './internal-types.js';
import { OperationContextImpl, outcomeSet } from './operation-context.js';

/** For unlimited work: nothing to give back. */
export const NOTHING_HELD: Held = {
  leave(): void {},
};

/** Unmeasured: runs the body inside the held slot, then leaves it (and tells `tally`, if any). */
export async function runUnmeasured<T>(
  held: Held,
  token: unknown,
  signal: AbortSignal | undefined,
  body: Body<T>,
  tally?: Tally,
): Promise<T> {
  try {
    return await body(new OperationContextImpl(signal));
  } finally {
    try {
      held.leave(token);
    } finally {
      if (tally !== undefined) tally.active--;
    }
  }
}

/** Measured: runs the body inside the held slot, leaves it, and tells `life` how it ended. */
export async function runMeasured<T>(
  held: Held,
  token: unknown,
  signal: AbortSignal | undefined,
  body: Body<T>,
  life: Lifecycle,
): Promise<T> {
  const op = new OperationContextImpl(signal);
  let outcome: Outcome = 'ok';
  try {
    const result = await body(op);
    outcome = outcomeSet(op) ?? 'ok';
    return result;
  } catch (error) {
    outcome = outcomeSet(op) ?? (isCancellation(error, signal) ? 'cancelled' : 'error');
    throw error;
  } finally {
    try {
      held.leave(token);
    } finally {
      life.ended(outcome);
    }
  }
}

/** The outcome rule for a body that threw with no outcome set. Never throws. */
function isCancellation(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  try {
    return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
  } catch {
    return false;
  }
}

/**
 * The check between "the slot is mine" and "the body starts": a signal that aborted in between
 * (after the wait was granted, before this continuation ran) means the body must not run.
 * Returns true when the caller must give the slot back and reject with `signal.reason`.
 */
export function abortedAfterGrant(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
