// The one run path of every operation: asked → acquire (raced against the caller's signal and
// the admission deadline) → held → the body → release → ended. It is called by the caller, so
// the body runs in the caller's async context whoever granted the slot. A wait that ends from
// outside rejects at once; the slot, when the limit grants it later, is released at once (as
// async-mutex's own `withTimeout` does).

import { isOutcome, OUTCOMES, type Outcome } from '@gym/constants';
import { describeValue, invalidChoice } from '@gym/core/internal';
import { AdmissionRejectedError, AdmissionTimeoutError } from './admission-errors.js';
import type { Gate } from './limits.js';
import { now, reporter } from './scope.js';
import type { OperationContext } from './types.js';

export type Body<T> = (op: OperationContext) => PromiseLike<T> | T;

/**
 * What an operation tells its telemetry; one per series, keeping no state of any call (the call
 * keeps the clock readings and hands them back; `NaN`: not read). Every call is asked, then held
 * or `left` (it stopped waiting without a slot; not told of refusals), then ended. Never throws.
 */
export interface Recorder {
  asked(): number;
  held(askedAt: number): number;
  left(askedAt: number): void;
  ended(heldAt: number, outcome: Outcome): void;
}

function nothing(): void {}

function notRead(): number {
  return Number.NaN;
}

export const OFF: Recorder = { asked: notRead, held: notRead, left: nothing, ended: nothing };

/** The admission totals of one metered limit. */
export interface AdmissionTotals {
  timeouts: number;
  cancelled: number;
  rejected: number;
}

/**
 * The live counts of one limiter: the calls made through its metered limits (one limiter wrapped
 * twice has one), and the limiter read live.
 */
export interface Counts {
  /** Whether a call now would get a slot at once. */
  readonly free: () => boolean;
  /** Its slots and its free slots, read live. */
  readonly limit: () => number;
  readonly available: () => number;
  /**
   * The limit is judged by these counts alone (an acquire()/release() object): a slot one of its
   * calls gives back passes to a call still counted as queued, and counts as taken (`handed`)
   * until the grant reaches a call (which holds it, or has left and passes it on).
   */
  readonly passes?: true;
  queued: number;
  active: number;
  /** Slots passed to calls still counted as queued (only when `passes`). */
  handed: number;
  /**
   * While it is exported: when each wait started, in order (`NaN` once that wait ended; the
   * front is always a wait still going on), and the sequence number of the first.
   */
  waits: number[] | undefined;
  waitsFrom: number;
}

/** The wait numbered `seq` ended: its start is forgotten, and the front moves past every ended one. */
function waitEnded(counts: Counts, seq: number): void {
  const waits = counts.waits;
  if (seq < counts.waitsFrom || waits === undefined) return;
  waits[seq - counts.waitsFrom] = Number.NaN;
  while (waits.length > 0 && Number.isNaN(waits[0])) {
    waits.shift();
    counts.waitsFrom++;
  }
}

/** One metered limit: its admission rules and totals, and the counts of its limiter. */
export interface Admission {
  readonly limitName: string;
  readonly maxQueued: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly counts: Counts;
  readonly totals: AdmissionTotals;
}

/** One of its calls gave a slot back (or a late grant was given straight back): it passes to a queued call. */
function passed(admission: Admission | undefined): void {
  const counts = admission?.counts;
  if (counts?.passes === true && counts.queued > counts.handed) counts.handed++;
}

const ALLOWED = `one of ${OUTCOMES.map((o) => JSON.stringify(o)).join(', ')} (or undefined)`;

function checkOutcome(value: unknown): void {
  if (value !== undefined && !isOutcome(value)) throw invalidChoice('op.outcome', value, ALLOWED);
}

/** The one `op` of every call that nothing records and no signal cancels; its outcome is checked, not kept. */
class UnrecordedOp implements OperationContext {
  readonly signal = undefined;
  get outcome(): Outcome | undefined {
    return undefined;
  }
  set outcome(value: Outcome | undefined) {
    checkOutcome(value);
  }
}

export const UNRECORDED_OP: OperationContext = Object.freeze(new UnrecordedOp());

/**
 * Runs `body` inside `gate` (`undefined`: unlimited); `signal` has not aborted. Throws
 * `AdmissionRejectedError` synchronously on a refusal.
 */
export function run<T>(
  gate: Gate | undefined,
  admission: Admission | undefined,
  signal: AbortSignal | undefined,
  body: Body<T>,
  rec: Recorder,
): Promise<T> {
  if (gate === undefined) {
    if (signal === undefined && rec === OFF) return invoke(body, UNRECORDED_OP);
    const call = new Call(body, signal, rec, undefined, false);
    call.ask();
    return Call.hold(call);
  }
  let waits = false;
  if (admission !== undefined) {
    const counts = admission.counts;
    waits = !counts.free();
    const max = admission.maxQueued;
    if (waits && max !== undefined && counts.queued - counts.handed >= max) {
      admission.totals.rejected++;
      throw new AdmissionRejectedError(admission.limitName, max);
    }
    if (waits) counts.queued++;
    else counts.active++;
  }
  const call = new Call(body, signal, rec, admission, waits);
  call.ask();
  // p-limit runs the call itself when there is nothing to race (its slot held open costs more):
  // a deadline races only a call that waits.
  if (gate.inside !== undefined && signal === undefined && (!waits || admission?.timeoutMs === undefined)) {
    return gate.inside(Call.hold, call, Call.leftUnheld);
  }
  return Call.held(call, gate);
}

async function invoke<T>(body: Body<T>, op: OperationContext): Promise<T> {
  return body(op);
}

/** One operation from asking to its end, and the `op` its body receives (only `signal` and `outcome` are public). */
class Call<T> implements OperationContext {
  readonly signal: AbortSignal | undefined;
  #outcome: Outcome | undefined = undefined;
  readonly #body: Body<T>;
  readonly #rec: Recorder;
  readonly #admission: Admission | undefined;
  readonly #waits: boolean;
  #started = false;
  /** How the body ended, once it has. */
  #ended: Outcome = 'ok';
  #askedAt = Number.NaN;
  /** Its number among its limit's waits (for the oldest wait), or -1. */
  #wait = -1;

  constructor(
    body: Body<T>,
    signal: AbortSignal | undefined,
    rec: Recorder,
    admission: Admission | undefined,
    waits: boolean,
  ) {
    this.signal = signal;
    this.#body = body;
    this.#rec = rec;
    this.#admission = admission;
    this.#waits = waits;
  }

  get outcome(): Outcome | undefined {
    return this.#outcome;
  }

  set outcome(value: Outcome | undefined) {
    checkOutcome(value);
    this.#outcome = value;
  }

  ask(): void {
    this.#askedAt = this.#rec.asked();
    // A waiting call of an exported limit: its wait's start, for the oldest wait (a clock read
    // of its own only when nothing measures it).
    const counts = this.#waits ? this.#admission?.counts : undefined;
    if (counts?.waits !== undefined) {
      const since = Number.isNaN(this.#askedAt) ? now() : this.#askedAt;
      if (!Number.isNaN(since)) this.#wait = counts.waitsFrom + counts.waits.push(since) - 1;
    }
  }

  /** It stopped waiting without a slot. */
  static leftUnheld(call: Call<unknown>, reason?: unknown): void {
    if (call.#started) return;
    const admission = call.#admission;
    if (admission !== undefined) {
      const counts = admission.counts;
      if (call.#waits) {
        counts.queued--;
        waitEnded(counts, call.#wait);
        call.#wait = -1;
        // A pass is only ever in transit to a queued call: one that reached this call before it
        // left (its grant given straight back, possibly while it was still counted) is no more.
        counts.handed = Math.min(counts.handed, counts.queued);
      } else {
        counts.active--;
      }
      if (reason instanceof AdmissionTimeoutError) admission.totals.timeouts++;
      else if (call.signal?.aborted === true && reason === call.signal.reason) admission.totals.cancelled++;
    }
    call.#rec.left(call.#askedAt);
  }

  /** Runs the body in a slot the limit holds for it (p-limit runs this call itself), or unlimited. */
  static async hold<T>(call: Call<T>): Promise<T> {
    const heldAt = call.#start();
    try {
      return call.#returned(await call.#body(call));
    } catch (error) {
      throw call.#threw(error);
    } finally {
      call.#end(heldAt);
    }
  }

  /**
   * Acquires a slot of `gate` (raced against the signal and the deadline), runs the body holding
   * it, and gives it back, in one async function: a second one between the acquire and the body
   * cost a measured call 2–4 %. (`hold` is apart: this larger frame cost p-limit about 1.5 %.)
   */
  static async held<T>(call: Call<T>, gate: Gate): Promise<T> {
    const { signal } = call;
    const admission = call.#admission;
    // A deadline races only a call that waits: one that found a free slot has it at once.
    const deadline = call.#waits ? admission?.timeoutMs : undefined;
    let token: unknown;
    try {
      // Nothing to race (no signal, no deadline): the acquire alone.
      token = await (signal === undefined && deadline === undefined
        ? gate.acquire()
        : race(gate, signal, admission, deadline));
      gate.check?.(token);
      // Aborted after the grant, before this continuation ran: the body must not start.
      if (signal?.aborted) {
        releaseLate(gate, token, admission);
        throw signal.reason;
      }
    } catch (reason) {
      Call.leftUnheld(call, reason);
      throw reason;
    }
    const heldAt = call.#start();
    try {
      return call.#returned(await call.#body(call));
    } catch (error) {
      throw call.#threw(error);
    } finally {
      try {
        const freed = gate.release(token);
        passed(admission);
        if (freed !== undefined) await freed;
      } finally {
        call.#end(heldAt);
      }
    }
  }

  /** It holds its slot: the counts move, and the recorder is told (its reading is handed to `#end`). */
  #start(): number {
    const admission = this.#admission;
    this.#started = true;
    if (admission !== undefined) {
      const counts = admission.counts;
      if (this.#waits) {
        counts.queued--;
        counts.active++;
        waitEnded(counts, this.#wait);
        this.#wait = -1;
      }
      // A slot counted as passed reached a call (one counted as waiting, or, behind a grant to a
      // caller that left, one the counts had found a free slot for).
      if (counts.handed > 0) counts.handed--;
    }
    return this.#rec.held(this.#askedAt);
  }

  #returned<R>(result: R): R {
    this.#ended = this.#outcome ?? 'ok';
    return result;
  }

  #threw(error: unknown): unknown {
    this.#ended = this.#outcome ?? (isCancellation(error, this.signal) ? 'cancelled' : 'error');
    return error;
  }

  /** Its slot is given back. */
  #end(heldAt: number): void {
    if (this.#admission !== undefined) this.#admission.counts.active--;
    this.#rec.ended(heldAt, this.#ended);
  }
}

function isCancellation(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}

/** `gate.acquire()`, ended first by the signal or the admission deadline of `ms` (a call that waits). */
function race(
  gate: Gate,
  signal: AbortSignal | undefined,
  admission: Admission | undefined,
  ms: number | undefined,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    // First: when it throws, this promise rejects with nothing watched yet.
    const granted = gate.acquire();
    let done = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = (): boolean => {
      if (done) return false;
      done = true;
      if (signal !== undefined) unwatchAbort(signal, end);
      clearTimeout(timer);
      return true;
    };
    const end = (reason: unknown): void => {
      if (stop()) reject(reason);
    };
    if (signal !== undefined) watchAbort(signal, end);
    // A slot granted after the caller left is given straight back.
    granted.then((token) => (stop() ? resolve(token) : releaseLate(gate, token, admission)), end);
    if (ms !== undefined) {
      // Not unref'd: the caller waits for its outcome (async-mutex's withTimeout does the same).
      // The error is made only when the deadline passes.
      timer = setTimeout(() => end(new AdmissionTimeoutError(admission?.limitName ?? '', ms)), ms);
    }
  });
}

/**
 * Gives back a slot its caller no longer wants; a failure is reported, never thrown. The grant may
 * have been counted as passed to a queued call: it reached this one instead, and passes on.
 */
function releaseLate(gate: Gate, token: unknown, admission: Admission | undefined): void {
  if (admission !== undefined && admission.counts.handed > 0) admission.counts.handed--;
  new Promise((resolve) => {
    resolve(gate.release(token));
    passed(admission);
  }).then(undefined, (error: unknown) =>
    reporter.warnOnce('late-release', 'releasing a slot granted after its caller stopped waiting failed', error),
  );
}

// One `abort` listener per signal however many operations wait on it: a server passes one
// shutdown signal to every operation, and a listener each would trip Node's leak warning.
const watches = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

function onAbort(this: AbortSignal): void {
  const waits = watches.get(this);
  watches.delete(this);
  if (waits !== undefined) for (const end of waits) end(this.reason);
}

function watchAbort(signal: AbortSignal, end: (reason: unknown) => void): void {
  let waits = watches.get(signal);
  if (waits === undefined) {
    waits = new Set();
    watches.set(signal, waits);
    signal.addEventListener('abort', onAbort, { once: true });
  }
  waits.add(end);
}

function unwatchAbort(signal: AbortSignal, end: (reason: unknown) => void): void {
  const waits = watches.get(signal);
  if (waits === undefined || !waits.delete(end) || waits.size > 0) return;
  watches.delete(signal);
  signal.removeEventListener('abort', onAbort);
}

/** `signal` as a real, readable AbortSignal, or a TypeError naming `what`. Called before anything is acquired. */
export function checkSignal(signal: unknown, what: string): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  try {
    if (signal instanceof AbortSignal && typeof signal.aborted === 'boolean') return signal;
  } catch {
    // A look-alike whose getter throws.
  }
  throw new TypeError(`${what} must be an AbortSignal; got ${describeValue(signal)}`);
}
