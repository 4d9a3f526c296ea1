// The one run path (asked → acquire, raced → held → body → release → ended), called by the caller: the body keeps its async context.

import { isOutcome, OUTCOMES, type Outcome } from '@gym/constants';
import { describeValue, invalidChoice } from '@gym/core/internal';
import { AdmissionRejectedError, AdmissionTimeoutError } from './admission-errors.js';
import type { Gate, LiveReaders } from './limits.js';
import { now, reporter } from './scope.js';
import type { OperationContext } from './types.js';

export type Body<T> = (op: OperationContext) => PromiseLike<T> | T;

/** What a call tells its series: asked, then held or `left` (no slot), then ended; the call keeps the readings (`NaN`: not read). */
export interface Recorder {
  asked(): number;
  held(askedAt: number): number;
  left(askedAt: number): void;
  ended(heldAt: number, outcome: Outcome): void;
}

export const OFF: Recorder = { asked: () => Number.NaN, held: () => Number.NaN, left() {}, ended() {} };

/** The counts of one limiter (shared by its metered limits) and its live readers. */
export interface Limiter extends LiveReaders {
  queued: number;
  active: number;
  /** Slots given back to calls still counted as queued (only when `passes`): taken until one starts. */
  handed: number;
  /** While exported: each wait's start in order (`NaN` once ended; the front is a wait going on), and the front's number. */
  waits: number[] | undefined;
  waitsFrom: number;
}

export type AdmissionTotals = Record<'timeouts' | 'cancelled' | 'rejected', number>;

/** One metered limit's admission rules and totals, apart from its limiter's counts. */
export interface Admission {
  readonly limitName: string;
  readonly maxQueued: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly limiter: Limiter;
  readonly totals: AdmissionTotals;
  /** Its attribute set's totals, while it is exported. */
  exported: AdmissionTotals | undefined;
}

function count(admission: Admission, what: keyof AdmissionTotals): void {
  admission.totals[what]++;
  if (admission.exported !== undefined) admission.exported[what]++;
}

/** A slot was given back: it passes to a waiting call. */
function passed(admission: Admission | undefined): void {
  const limiter = admission?.limiter;
  if (limiter?.passes === true && limiter.queued > limiter.handed) limiter.handed++;
}

const ALLOWED = `one of ${OUTCOMES.map((o) => JSON.stringify(o)).join(', ')} (or undefined)`;

function checkOutcome(value: unknown): void {
  if (value !== undefined && !isOutcome(value)) throw invalidChoice('op.outcome', value, ALLOWED);
}

/** The `op` of every call that nothing records and no signal cancels; its outcome is checked, not kept. */
export const UNRECORDED_OP = Object.freeze(
  Object.defineProperty({ signal: undefined } as OperationContext, 'outcome', { get() {}, set: checkOutcome }),
);

/** Runs `body` in a slot of `gate` (`undefined`: unlimited). Throws `AdmissionRejectedError` on a refusal. */
export function run<T>(
  gate: Gate | undefined,
  admission: Admission | undefined,
  signal: AbortSignal | undefined,
  body: Body<T>,
  rec: Recorder,
): Promise<T> {
  const call = new Call(body, signal, rec, admission);
  // A limiter that takes a function runs the call itself when there is nothing to race.
  if (gate?.inside !== undefined && signal === undefined && Call.deadline(call) === undefined) {
    return gate.inside(Call.held, call, Call.leftUnheld);
  }
  return Call.held(call, gate);
}

/** One operation from asking to its end, and the `op` its body receives (only `signal` and `outcome` are public). */
class Call<T> implements OperationContext {
  readonly signal: AbortSignal | undefined;
  #outcome: Outcome | undefined = undefined;
  readonly #body: Body<T>;
  readonly #rec: Recorder;
  readonly #admission: Admission | undefined;
  readonly #askedAt: number;
  readonly #waits: boolean = false;
  #started = false;
  /** Its number among its limiter's waits, or -1. */
  #wait = -1;

  constructor(body: Body<T>, signal: AbortSignal | undefined, rec: Recorder, admission: Admission | undefined) {
    this.signal = signal;
    this.#body = body;
    this.#rec = rec;
    this.#admission = admission;
    const limiter = admission?.limiter;
    if (admission !== undefined && limiter !== undefined) {
      this.#waits = !(limiter.available() > 0);
      const max = admission.maxQueued;
      if (this.#waits && max !== undefined && limiter.queued - limiter.handed >= max) {
        count(admission, 'rejected');
        throw new AdmissionRejectedError(admission.limitName, max);
      }
      if (this.#waits) limiter.queued++;
      else limiter.active++;
    }
    this.#askedAt = rec.asked();
    if (this.#waits && limiter?.waits !== undefined) {
      const since = Number.isNaN(this.#askedAt) ? now() : this.#askedAt;
      if (!Number.isNaN(since)) this.#wait = limiter.waitsFrom + limiter.waits.push(since) - 1;
    }
  }

  static deadline(call: Call<unknown>): number | undefined {
    return call.#waits ? call.#admission?.timeoutMs : undefined;
  }

  get outcome(): Outcome | undefined {
    return this.#outcome;
  }

  set outcome(value: Outcome | undefined) {
    checkOutcome(value);
    this.#outcome = value;
  }

  static leftUnheld(call: Call<unknown>, reason?: unknown): void {
    if (call.#started) return;
    const admission = call.#admission;
    if (admission !== undefined) {
      const limiter = admission.limiter;
      if (!call.#unqueue(limiter)) limiter.active--;
      // A slot passed to it before it left was given straight back: it is no more.
      limiter.handed = Math.min(limiter.handed, limiter.queued);
      if (reason instanceof AdmissionTimeoutError) count(admission, 'timeouts');
      else if (call.signal?.aborted === true && reason === call.signal.reason) count(admission, 'cancelled');
    }
    call.#rec.left(call.#askedAt);
  }

  /** Takes a slot of `gate` (none: unlimited, or the limiter runs this call), races it, runs the body, gives it back. */
  static async held<T>(call: Call<T>, gate?: Gate): Promise<T> {
    const { signal } = call;
    const admission = call.#admission;
    let token: unknown;
    if (gate !== undefined) {
      try {
        const deadline = Call.deadline(call);
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
    }
    call.#started = true;
    const limiter = admission?.limiter;
    if (limiter !== undefined) {
      if (call.#unqueue(limiter)) limiter.active++;
      if (limiter.handed > 0) limiter.handed--;
    }
    const heldAt = call.#rec.held(call.#askedAt);
    let outcome: Outcome = 'ok';
    try {
      const result = await call.#body(call);
      outcome = call.#outcome ?? 'ok';
      return result;
    } catch (error) {
      const cancelled = signal?.aborted || (error as { name?: unknown } | null)?.name === 'AbortError';
      outcome = call.#outcome ?? (cancelled ? 'cancelled' : 'error');
      throw error;
    } finally {
      try {
        if (gate !== undefined) {
          const freed = gate.release(token);
          passed(admission);
          if (freed !== undefined) await freed;
        }
      } finally {
        if (limiter !== undefined) limiter.active--;
        call.#rec.ended(heldAt, outcome);
      }
    }
  }

  #unqueue(limiter: Limiter): boolean {
    if (!this.#waits) return false;
    limiter.queued--;
    const waits = limiter.waits;
    if (waits !== undefined && this.#wait >= limiter.waitsFrom) {
      waits[this.#wait - limiter.waitsFrom] = Number.NaN;
      while (waits.length > 0 && Number.isNaN(waits[0])) {
        waits.shift();
        limiter.waitsFrom++;
      }
    }
    this.#wait = -1;
    return true;
  }
}

/** `gate.acquire()`, ended first by the signal or the deadline of `ms`; a slot granted after that is given straight back. */
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
      unwatch?.();
      clearTimeout(timer);
      return true;
    };
    const end = (reason: unknown): void => {
      if (stop()) reject(reason);
    };
    const unwatch = signal && watchAbort(signal, end);
    granted.then((token) => (stop() ? resolve(token) : releaseLate(gate, token, admission)), end);
    // Not unref'd: the caller waits for its outcome. The error is made only when the deadline passes.
    if (ms !== undefined) timer = setTimeout(() => end(new AdmissionTimeoutError(admission?.limitName ?? '', ms)), ms);
  });
}

/** Gives back a slot its caller no longer wants (a slot passed to a waiting call reached this one: it passes on); a failure is reported. */
function releaseLate(gate: Gate, token: unknown, admission: Admission | undefined): void {
  if (admission !== undefined && admission.limiter.handed > 0) admission.limiter.handed--;
  new Promise((resolve) => {
    resolve(gate.release(token));
    passed(admission);
  }).then(undefined, (error: unknown) =>
    reporter.warnOnce('late-release', 'releasing a slot granted after its caller stopped waiting failed', error),
  );
}

// One `abort` listener per signal, removed once nobody waits: a server passes one shutdown signal
// to every operation, and a listener each would trip Node's leak warning.
const watches = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

function onAbort(this: AbortSignal): void {
  const ends = watches.get(this);
  watches.delete(this);
  if (ends !== undefined) for (const end of ends) end(this.reason);
}

function watchAbort(signal: AbortSignal, end: (reason: unknown) => void): () => void {
  let ends = watches.get(signal);
  if (ends === undefined) {
    ends = new Set();
    watches.set(signal, ends);
    signal.addEventListener('abort', onAbort, { once: true });
  }
  ends.add(end);
  return () => {
    if (!ends.delete(end) || ends.size > 0) return;
    watches.delete(signal);
    signal.removeEventListener('abort', onAbort);
  };
}

export function checkSignal(signal: unknown, what: string): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  try {
    if (signal instanceof AbortSignal && typeof signal.aborted === 'boolean') return signal;
  } catch {}
  throw new TypeError(`${what} must be an AbortSignal; got ${describeValue(signal)}`);
}
