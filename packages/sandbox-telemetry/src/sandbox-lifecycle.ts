// One sandbox's lifecycle metrics, with Gym's edge rules built in so a caller cannot get them
// wrong: a create that fails adds nothing and records no startup; a sandbox that fails after
// its handle was returned is released, which nets 0; release subtracts exactly once, at its
// first call, before the caller's close runs (so a close that throws or hangs changes
// nothing), and never subtracts what was not added; a borrowed (attached) sandbox is never
// added nor subtracted. Whether to record is decided when the create starts and holds to the
// release, so telemetry switched on mid-life never subtracts a sandbox it did not add.
//
// It only counts and times: the caller's functions run as given, their results and errors
// come back unchanged.

import { performance } from 'node:perf_hooks';
import { describeValue, invalidChoice, type MeterSourceOptions } from '@gym/core';
import type { Attributes } from '@opentelemetry/api';
import {
  lifecycleInstruments,
  meterSource,
  providerAttributes,
  reportMetricFailure,
  type SandboxLifecycleInstruments,
} from './lifecycle-instruments.js';
import { ownOptionOrUnset } from './own-data.js';
import { reporter } from './report.js';
import type { SandboxLifecycleOptions, SandboxLifecycleState } from './types.js';

const performanceNow = () => performance.now();

/**
 * The lifecycle metrics of one sandbox: `gym.sandbox.active`, `…startup_duration_ms`,
 * `…exec_duration_ms` and `…create_retry_total`, by `nemo.gym.sandbox.provider`.
 *
 * ```ts
 * const lifecycle = new SandboxLifecycle({ provider: 'docker' });
 * const sandbox = await lifecycle.create(() => docker.create(spec)); // +1, startup recorded; nothing if it throws
 * try {
 *   await sandbox.ready();
 * } catch (error) {
 *   await lifecycle.release(() => sandbox.remove()); // a failure after the handle was returned: net 0
 *   throw error;
 * }
 * await lifecycle.exec(() => sandbox.run(command)); // exec duration, whether it returns or throws
 * await lifecycle.release(() => sandbox.remove()); // -1 once, even if remove() throws
 * ```
 *
 * Nothing is recorded while the `sandbox` span group is off or no metrics export (and no
 * meter was injected). The constructor throws a `RangeError` for a provider name that is not
 * one, an `owned` that is not a boolean or a `now` that is not a function (programming
 * errors); nothing else here throws for telemetry's sake.
 */
export class SandboxLifecycle {
  readonly #attributes: Attributes | undefined;
  readonly #source: MeterSourceOptions | undefined;
  readonly #owned: boolean;
  readonly #now: () => number;
  #state: SandboxLifecycleState = 'new';
  /** The instruments the +1 went to; the -1 goes to the same ones. */
  #added: SandboxLifecycleInstruments | undefined;

  constructor(options: SandboxLifecycleOptions) {
    this.#attributes = providerAttributes(options);
    this.#source = meterSource(options);
    const owned = ownOptionOrUnset(options, 'owned') ?? true;
    if (typeof owned !== 'boolean') throw invalidChoice('owned', owned, 'true or false (false for a borrowed sandbox)');
    this.#owned = owned;
    const now = ownOptionOrUnset(options, 'now') ?? performanceNow;
    if (typeof now !== 'function') throw invalidChoice('now', now, 'a function returning milliseconds');
    this.#now = now as () => number;
  }

  /** Where this sandbox is: `new`, `creating`, `held` (created), `released`. */
  get state(): SandboxLifecycleState {
    return this.#state;
  }

  /**
   * Runs `create` (sync or returning a promise) and returns what it returns. When it
   * returns (or its promise fulfils), the sandbox is held: `gym.sandbox.active` +1 and its
   * startup duration recorded. When it throws (or rejects), nothing is recorded and the error
   * comes back unchanged; `create` may then be called again. For a borrowed sandbox, or a
   * lifecycle already created or released, `create` just runs.
   */
  create<T>(create: () => T): T {
    if (typeof create !== 'function') throw invalidChoice('create', create, 'a function that creates the sandbox');
    if (!this.#owned || this.#state !== 'new') return create();
    this.#state = 'creating';
    const instruments = this.#instruments();
    const started = instruments === undefined ? undefined : this.#clock();
    return observe(create, (created) => {
      if (created) this.#created(instruments, started);
      else if (this.#state === 'creating') this.#state = 'new';
    });
  }

  /** Counts one retried create attempt (`gym.sandbox.create_retry_total` +1); call it from inside `create`. */
  retried(): void {
    const attributes = this.#attributes;
    if (attributes === undefined) return;
    try {
      this.#instruments()?.createRetries.add(1, attributes);
    } catch (error) {
      reportMetricFailure(error);
    }
  }

  /**
   * Runs `exec` (sync or returning a promise) and records its duration into
   * `gym.sandbox.exec_duration_ms`, whether it returns or throws; its result or error comes
   * back unchanged.
   */
  exec<T>(exec: () => T): T {
    if (typeof exec !== 'function') throw invalidChoice('exec', exec, 'a function that runs in the sandbox');
    const instruments = this.#instruments();
    if (instruments === undefined) return exec(); // off: not even a promise wrapped
    const started = this.#clock();
    return observe(exec, () => this.#execEnded(instruments, started));
  }

  /**
   * Releases the sandbox: the first call subtracts it from `gym.sandbox.active` (only if it
   * was added), then runs `close` if given and returns what it returns (its error comes back
   * unchanged; the count has already moved). Later calls subtract nothing and just run
   * `close`, so a caller may retry a close that failed. A release during a create that has
   * not finished yet means that create, when it finishes, adds nothing.
   */
  release<T = undefined>(close?: () => T): T | undefined {
    if (close !== undefined && typeof close !== 'function') {
      throw invalidChoice('close', close, 'a function that closes the sandbox, or nothing');
    }
    if (this.#state !== 'released') {
      this.#state = 'released';
      const added = this.#added;
      this.#added = undefined;
      if (added !== undefined && this.#attributes !== undefined) {
        try {
          added.active.add(-1, this.#attributes);
        } catch (error) {
          reportMetricFailure(error);
        }
      }
    }
    return close === undefined ? undefined : close();
  }

  #created(instruments: SandboxLifecycleInstruments | undefined, started: number | undefined): void {
    if (this.#state !== 'creating') return; // released while creating: adds nothing
    this.#state = 'held';
    const attributes = this.#attributes;
    if (instruments === undefined || attributes === undefined) return;
    try {
      instruments.active.add(1, attributes);
      this.#added = instruments;
      const ms = this.#since(started);
      if (ms !== undefined) instruments.startupDuration.record(ms, attributes);
    } catch (error) {
      reportMetricFailure(error);
    }
  }

  #execEnded(instruments: SandboxLifecycleInstruments, started: number | undefined): void {
    const attributes = this.#attributes;
    if (attributes === undefined) return;
    const ms = this.#since(started);
    if (ms === undefined) return;
    try {
      instruments.execDuration.record(ms, attributes);
    } catch (error) {
      reportMetricFailure(error);
    }
  }

  /** The instruments to record on now (the gate), or `undefined`. Never throws. */
  #instruments(): SandboxLifecycleInstruments | undefined {
    return this.#attributes === undefined ? undefined : lifecycleInstruments(this.#source);
  }

  /** Milliseconds since `started`, or `undefined` when either clock read failed or time ran backwards. */
  #since(started: number | undefined): number | undefined {
    if (started === undefined) return undefined;
    const now = this.#clock();
    if (now === undefined) return undefined;
    const ms = now - started;
    if (ms >= 0) return ms;
    reporter.warnOnce('clock-backwards', () => `the clock went backwards (${ms} ms); that duration was dropped`);
    return undefined;
  }

  /** One clock read, or `undefined` when the clock throws or returns something else than a finite number. */
  #clock(): number | undefined {
    try {
      const now = this.#now();
      if (typeof now === 'number' && Number.isFinite(now)) return now;
      reporter.warnOnce('clock-value', () => `the clock returned ${describeValue(now)}; that duration was dropped`);
    } catch (error) {
      reporter.warnOnce('clock-threw', 'the clock threw; that duration was dropped', error);
    }
    return undefined;
  }
}

/**
 * Runs `run` and calls `settled(true)` when it returns or its promise fulfils, `settled(false)`
 * when it throws or rejects; the result or error comes back unchanged (`settled` never throws).
 */
function observe<T>(run: () => T, settled: (ok: boolean) => void): T {
  let result: T;
  try {
    result = run();
  } catch (error) {
    settled(false);
    throw error;
  }
  if (!(result instanceof Promise)) {
    settled(true);
    return result;
  }
  return result.then(
    (value: unknown) => {
      settled(true);
      return value;
    },
    (error: unknown) => {
      settled(false);
      throw error;
    },
  ) as T;
}
