// One sandbox's lifecycle metrics, with Gym's edge rules built in so a caller cannot get them
// wrong: a create that fails adds nothing and records no startup; a sandbox that fails after
// its handle was returned is released, which nets 0; release subtracts exactly once, at its
// first call, before the caller's close runs (so a close that throws or hangs changes
// nothing), and never subtracts what was not added; a borrowed (attached) sandbox is never
// added nor subtracted. Whether to record is decided when the create starts and holds to the
// release, so telemetry switched on mid-life never subtracts a sandbox it did not add. Unlike
// the records these are metrics, but they follow Gym's rule for the `sandbox` span group: with
// the group off none is recorded, whatever meter was injected.
//
// It only counts and times: the caller's functions run as given, and what they return comes
// back unchanged. Anything with a callable `then` is asynchronous (execa's subprocess, a
// Promise of another realm): it is timed to its settlement, not to the synchronous return.

import { isPromise } from 'node:util/types';
import { ATTR_SANDBOX_PROVIDER, INSTRUMENTS, SANDBOX_PROVIDER_PATTERN } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { createInstrument, invalidChoice, perMeter, resolveMeter } from '@gym/core/internal';
import type { Attributes, Counter, Histogram, UpDownCounter } from '@opentelemetry/api';
import { reporter, SCOPE, sandboxGroupOn } from './scope.js';
import type { SandboxLifecycleOptions, SandboxLifecycleState } from './types.js';

interface Instruments {
  readonly active: UpDownCounter;
  readonly startupDuration: Histogram;
  readonly execDuration: Histogram;
  readonly transferDuration: Histogram;
  readonly createRetries: Counter;
}

const instrumentsOf = perMeter(
  (meter): Instruments => ({
    active: createInstrument(meter, INSTRUMENTS.sandboxActive),
    startupDuration: createInstrument(meter, INSTRUMENTS.sandboxStartupDuration),
    execDuration: createInstrument(meter, INSTRUMENTS.sandboxExecDuration),
    transferDuration: createInstrument(meter, INSTRUMENTS.sandboxTransferDuration),
    createRetries: createInstrument(meter, INSTRUMENTS.sandboxCreateRetry),
  }),
);

/** Attribute objects, one per provider name, built once (a process uses a handful). */
const byProvider = new Map<string, Attributes>();

/**
 * The lifecycle metrics of one sandbox (`gym.sandbox.active`, `…startup_duration_ms`,
 * `…exec_duration_ms`, `…transfer_duration_ms`, `…create_retry_total`), by
 * `nemo.gym.sandbox.provider`.
 *
 * ```ts
 * const lifecycle = new SandboxLifecycle({ provider: 'docker' });
 * const sandbox = await lifecycle.create(() => docker.create(spec)); // +1, startup recorded; nothing if it throws
 * await lifecycle.transfer(() => sandbox.upload(files)); // transfer duration, whether it returns or throws
 * await lifecycle.exec(() => sandbox.run(command)); // exec duration, whether it returns or throws
 * await lifecycle.release(() => sandbox.remove()); // -1 once, even if remove() throws
 * ```
 *
 * The constructor throws a `RangeError` for a provider name that is not one (a programming
 * error, on or off); nothing else here throws for telemetry's sake.
 */
export class SandboxLifecycle {
  readonly #attributes: Attributes;
  readonly #options: SandboxLifecycleOptions;
  #state: SandboxLifecycleState = 'new';
  /** The instruments the +1 went to; the -1 goes to the same ones. */
  #added: Instruments | undefined;

  constructor(options: SandboxLifecycleOptions) {
    this.#attributes = providerAttributes(options.provider);
    this.#options = options;
  }

  /** Where this sandbox is: `new`, `creating`, `held` (created), `released`. */
  get state(): SandboxLifecycleState {
    return this.#state;
  }

  /**
   * Runs `create` and returns what it returns. When it returns (or what it returned fulfils),
   * the sandbox is held: `gym.sandbox.active` +1 and its startup duration recorded. When it
   * throws (or rejects), nothing is recorded and `create` may be called again. For a borrowed
   * sandbox, or a lifecycle already created or released, `create` just runs.
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

  /** Counts one retried create attempt (`gym.sandbox.create_retry_total` +1); call it from inside `create`. */
  retried(): void {
    const instruments = this.#instruments();
    if (instruments !== undefined) safely(() => instruments.createRetries.add(1, this.#attributes));
  }

  /**
   * Runs `exec` and records its duration into `gym.sandbox.exec_duration_ms`, up to the
   * settlement of what it returns when that is a thenable, whether it succeeds or fails. What
   * it returns or throws comes back unchanged.
   */
  exec<T>(exec: () => T): T {
    return this.#timed('execDuration', exec);
  }

  /** Runs `transfer` (an upload or a download) into `gym.sandbox.transfer_duration_ms`, as {@link exec} does. */
  transfer<T>(transfer: () => T): T {
    return this.#timed('transferDuration', transfer);
  }

  /**
   * Releases the sandbox: the first call subtracts it from `gym.sandbox.active` (only if it
   * was added), then runs `close` if given and returns what it returns (its error comes back
   * unchanged; the count has already moved). Later calls subtract nothing and just run
   * `close`, so a caller may retry a close that failed. A release during a create that has
   * not finished yet means that create, when it finishes, adds nothing.
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

/** `{ 'nemo.gym.sandbox.provider': provider }`, built once per name; a `RangeError` for a name that is not one. */
function providerAttributes(provider: string): Attributes {
  let attributes = byProvider.get(provider);
  if (attributes !== undefined) return attributes;
  if (typeof provider !== 'string' || !SANDBOX_PROVIDER_PATTERN.test(provider)) {
    throw invalidChoice('provider', provider, `a string matching ${SANDBOX_PROVIDER_PATTERN}`);
  }
  attributes = Object.freeze({ [ATTR_SANDBOX_PROVIDER]: provider });
  byProvider.set(provider, attributes);
  return attributes;
}

/**
 * Runs `run` and calls `settled(true)` when it returns or what it returned fulfils,
 * `settled(false)` when it throws or rejects (`settled` never throws). What `run` returned
 * comes back unchanged in kind: a native promise (of any realm) as a promise that settles
 * the same way, so a rejection nobody handles stays unhandled; any other thenable as the
 * very same object, its own API intact (execa's `stdout`, `kill()`), observed through its
 * own `then`.
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
