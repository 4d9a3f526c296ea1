// One sandbox's lifecycle metrics, with Gym's edge rules built in so a caller cannot get them
// wrong. Release subtracts at its first call, before the caller's close runs, so a close that
// throws or hangs changes nothing. Whether to record is decided when the create starts and
// holds to the release, so telemetry switched on mid-life never subtracts what it did not add.
// Unlike the records these are metrics, but Gym gates them on the `sandbox` span group too.

import { isPromise } from 'node:util/types';
import { ATTR_SANDBOX_PROVIDER, INSTRUMENTS, SANDBOX_PROVIDER_PATTERN } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { createInstrument, invalidChoice, perMeter, resolveMeter } from '@gym/core/internal';
import type { Attributes } from '@opentelemetry/api';
import { reporter, SCOPE, sandboxGroupOn } from './scope.js';
import type { SandboxLifecycleOptions, SandboxLifecycleState } from './types.js';

const instrumentsOf = perMeter((meter) => ({
  active: createInstrument(meter, INSTRUMENTS.sandboxActive),
  startupDuration: createInstrument(meter, INSTRUMENTS.sandboxStartupDuration),
  execDuration: createInstrument(meter, INSTRUMENTS.sandboxExecDuration),
  transferDuration: createInstrument(meter, INSTRUMENTS.sandboxTransferDuration),
  createRetries: createInstrument(meter, INSTRUMENTS.sandboxCreateRetry),
}));
type Instruments = ReturnType<typeof instrumentsOf>;

/**
 * The lifecycle metrics of one sandbox, by `nemo.gym.sandbox.provider`. The constructor throws
 * a `RangeError` for a provider name that is not one (on or off); nothing else here throws.
 */
export class SandboxLifecycle {
  readonly #attributes: Attributes;
  readonly #options: SandboxLifecycleOptions;
  #state: SandboxLifecycleState = 'new';
  /** The instruments the +1 went to; the -1 goes to the same ones. */
  #added: Instruments | undefined;

  constructor(options: SandboxLifecycleOptions) {
    const provider = options.provider;
    if (typeof provider !== 'string' || !SANDBOX_PROVIDER_PATTERN.test(provider)) {
      throw invalidChoice('provider', provider, `a string matching ${SANDBOX_PROVIDER_PATTERN}`);
    }
    this.#attributes = Object.freeze({ [ATTR_SANDBOX_PROVIDER]: provider }); // built once, off or on
    this.#options = { ...options }; // a caller's later edit of its options object changes nothing here
  }

  get state(): SandboxLifecycleState {
    return this.#state;
  }

  /**
   * Runs `create`: when it returns (or what it returned fulfils), +1 and its startup duration;
   * when it throws (or rejects), nothing, and it may be tried again.
   */
  create<T>(create: () => T): T {
    if (this.#options.owned === false || this.#state !== 'new') return create();
    this.#state = 'creating';
    const instruments = this.#instruments();
    const started = instruments === undefined ? 0 : performance.now();
    return observe(create, (created) => {
      if (this.#state !== 'creating') return; // released while creating: adds nothing
      this.#state = created ? 'held' : 'new';
      if (!created || instruments === undefined) return;
      safely(() => {
        instruments.active.add(1, this.#attributes);
        this.#added = instruments;
        instruments.startupDuration.record(performance.now() - started, this.#attributes);
      });
    });
  }

  /** Counts one retried create attempt; call it from inside `create`. */
  retried(): void {
    const instruments = this.#instruments();
    if (instruments !== undefined) safely(() => instruments.createRetries.add(1, this.#attributes));
  }

  /** Runs `exec` and records its duration, to its settlement when it returns a thenable, however it ends. */
  exec<T>(exec: () => T): T {
    return this.#timed('execDuration', exec);
  }

  /** Runs `transfer` (an upload or a download) and records its duration, as {@link exec} does. */
  transfer<T>(transfer: () => T): T {
    return this.#timed('transferDuration', transfer);
  }

  /**
   * The first call subtracts the sandbox (if it was added), then every call runs `close` and
   * returns what it returns, so a close that failed may be retried.
   */
  release<T = undefined>(close?: () => T): T | undefined {
    if (this.#state !== 'released') {
      this.#state = 'released';
      const added = this.#added;
      this.#added = undefined;
      if (added !== undefined) safely(() => added.active.add(-1, this.#attributes));
    }
    return close?.();
  }

  #timed<T>(histogram: 'execDuration' | 'transferDuration', run: () => T): T {
    const instruments = this.#instruments();
    if (instruments === undefined) return run(); // off: not even a promise wrapped
    const started = performance.now();
    return observe(run, () =>
      safely(() => instruments[histogram].record(performance.now() - started, this.#attributes)),
    );
  }

  /** The instruments to record on now, or `undefined`. Off, one read of the shared state. Never throws. */
  #instruments(): Instruments | undefined {
    const options = this.#options;
    if ((options.meterProvider == null && !isMetricsExporting()) || !sandboxGroupOn()) return undefined;
    return safely(() => {
      const meter = resolveMeter(options, SCOPE, reporter);
      return meter && instrumentsOf(meter);
    });
  }
}

/** The one edge of every lifecycle recording: a meter that throws is reported once, never passed on. */
function safely<T>(record: () => T): T | undefined {
  try {
    return record();
  } catch (error) {
    reporter.warnOnce(
      'lifecycle-metric',
      'recording a sandbox lifecycle metric failed; the value was dropped (the next call tries again)',
      error,
    );
    return undefined;
  }
}

/**
 * Runs `run` and calls `settled(ok)` once it returned or threw, or what it returned settled.
 * A native promise (of any realm) comes back as a promise that settles the same way, so a
 * rejection nobody handles stays unhandled; any other thenable (execa's subprocess) comes back
 * as the very same object, its own API intact, observed through its own `then`.
 */
function observe<T>(run: () => T, settled: (ok: boolean) => void): T {
  let result: T;
  try {
    result = run();
  } catch (error) {
    settled(false);
    throw error;
  }
  const then = (result as { then?: unknown } | null | undefined)?.then;
  if (typeof then !== 'function') {
    settled(true);
    return result;
  }
  if (isPromise(result)) {
    return then.call(
      result,
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
  then.call(
    result,
    () => settled(true),
    () => settled(false),
  );
  return result;
}
