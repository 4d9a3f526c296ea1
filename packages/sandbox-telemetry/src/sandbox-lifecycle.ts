// One sandbox's lifecycle metrics, with Gym's edge rules built in so a caller cannot get them
// wrong. A release subtracts when its close succeeds (Gym's newest rule): a close that throws,
// rejects or hangs keeps the sandbox counted, and the first close that succeeds subtracts it
// once. Whether to record is decided when the create starts and holds to the release, so
// telemetry switched on mid-life never subtracts what it did not add. Unlike the records these
// are metrics, but Gym gates them on the `sandbox` span group too; a lifecycle that would have
// recorded with the group off says so once. It also opens Gym 0.7.0's lifecycle spans:
// `gym.sandbox.start` around a create, `gym.sandbox.exec` around an exec, `gym.sandbox.stop`
// around a close, each the active span of what it wraps (so the provider's own spans are its
// children), ended when what it wraps settles.

import { isPromise } from 'node:util/types';
import {
  ATTR_SANDBOX_ID,
  ATTR_SANDBOX_PROVIDER,
  INSTRUMENTS,
  SANDBOX_PROVIDER_PATTERN,
  SPAN_SANDBOX_EXEC,
  SPAN_SANDBOX_START,
  SPAN_SANDBOX_STOP,
} from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { createInstrument, invalidChoice, perMeter, resolveMeter } from '@gym/core/internal';
import { type Attributes, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { reporter, SCOPE, sandboxGroupOn, sandboxTracer } from './scope.js';
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
  /** `nemo.gym.sandbox.id` on the exec and stop spans, once a create named it. */
  #id: string | undefined;

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
   * when it throws (or rejects), nothing, and it may be tried again. `sandboxId`, when given,
   * names the created sandbox (`nemo.gym.sandbox.id`, on spans only) from what `create` gave.
   */
  create<T>(create: () => T, sandboxId?: (created: Awaited<T>) => string): T {
    if (this.#options.owned === false || this.#state !== 'new') return create();
    this.#state = 'creating';
    const instruments = this.#instruments();
    const started = instruments === undefined ? 0 : performance.now();
    const span = this.#span(SPAN_SANDBOX_START);
    return observe(span === undefined ? create : inside(span, create), (created, outcome) => {
      if (span !== undefined) {
        if (created && sandboxId !== undefined) this.#id = safely(() => sandboxId(outcome as Awaited<T>));
        endSpan(span, created, outcome, this.#id);
      }
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
    const span = this.#span(SPAN_SANDBOX_EXEC);
    if (span === undefined) return this.#timed('execDuration', exec);
    return observe(
      () => this.#timed('execDuration', inside(span, exec)),
      (ok, outcome) => endSpan(span, ok, outcome, this.#id),
    );
  }

  /** Runs `transfer` (an upload or a download) and records its duration, as {@link exec} does. */
  transfer<T>(transfer: () => T): T {
    return this.#timed('transferDuration', transfer);
  }

  /**
   * Runs `close` and returns what it returns; when it returns (or what it returned fulfils),
   * the sandbox is released and subtracted (if it was added), once. A close that throws or
   * rejects changes nothing, so it may be tried again. Without `close`, released at once.
   */
  release<T = undefined>(close?: () => T): T | undefined {
    if (close === undefined) {
      this.#released();
      return undefined;
    }
    // A borrowed sandbox is not this process's to stop: Gym opens no stop span for it either.
    const span = this.#options.owned === false ? undefined : this.#span(SPAN_SANDBOX_STOP);
    return observe(span === undefined ? close : inside(span, close), (closed, outcome) => {
      if (span !== undefined) endSpan(span, closed, outcome, this.#id);
      if (closed) this.#released();
    });
  }

  /** A started span of `name` with the provider, or `undefined` when no span is recorded. Never throws. */
  #span(name: string): Span | undefined {
    const tracer = sandboxTracer(this.#options);
    if (tracer === undefined) return undefined;
    return safely(() => tracer.startSpan(name, { attributes: this.#attributes }));
  }

  #released(): void {
    this.#state = 'released';
    const added = this.#added;
    this.#added = undefined;
    if (added !== undefined) safely(() => added.active.add(-1, this.#attributes));
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
    if (options.meterProvider == null && !isMetricsExporting()) return undefined;
    if (!sandboxGroupOn()) {
      if (!groupOffReported) reportGroupOff();
      return undefined;
    }
    return safely(() => {
      const meter = resolveMeter(options, SCOPE, reporter);
      return meter && instrumentsOf(meter);
    });
  }
}

/** Whether this copy already said that the `sandbox` group is off (the reporter's once is per process). */
let groupOffReported = false;

/** Once: metrics would have been recorded but for the `sandbox` span group, off by default. */
function reportGroupOff(): void {
  groupOffReported = true;
  reporter.warnOnce(
    'sandbox-group-off',
    `the 'sandbox' span group is off, so the sandbox lifecycle metrics (gym.sandbox.*) are not recorded ` +
      `(Gym's rule; the default span groups leave it out): add it, e.g. NEMO_GYM_OTEL_SPAN_GROUPS=default,sandbox`,
  );
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

/** `run` with `span` as the active span of everything it does. */
function inside<T>(span: Span, run: () => T): () => T {
  return () => context.with(trace.setSpan(context.active(), span), run);
}

/** Ends a lifecycle span as Gym's spans end: the sandbox id when known, an error recorded with its status. */
function endSpan(span: Span, ok: boolean, outcome: unknown, id: string | undefined): void {
  safely(() => {
    if (id !== undefined) span.setAttribute(ATTR_SANDBOX_ID, id);
    if (!ok) {
      const error = outcome instanceof Error ? outcome : new Error(String(outcome));
      span.recordException(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    span.end();
  });
}

/**
 * Runs `run` and calls `settled(ok, outcome)` once it returned or threw (the value or the
 * error), or what it returned settled.
 * Never calls a `then` the caller would not have called: work that starts in `then` (a
 * superagent request, a mongoose `Query`, a knex builder) runs exactly as often as without
 * telemetry. A promise of this realm (its `then` is the built-in one, which starts nothing)
 * comes back as a derived promise that settles the same way, so a rejection nobody handles
 * stays unhandled. Any other thenable (execa's subprocess, a promise of another realm) comes
 * back from {@link observed} as a Proxy that is the thenable in everything but its `then`.
 */
function observe<T>(run: () => T, settled: (ok: boolean, outcome: unknown) => void): T {
  let result: T;
  try {
    result = run();
  } catch (error) {
    settled(false, error);
    throw error;
  }
  const then = (result as { then?: unknown } | null | undefined)?.then;
  if (typeof then !== 'function') {
    settled(true, result);
    return result;
  }
  if (then === promiseThen && isPromise(result)) {
    return then.call(
      result,
      (value: unknown) => {
        settled(true, value);
        return value;
      },
      (error: unknown) => {
        settled(false, error);
        throw error;
      },
    ) as T;
  }
  return observed(result as T & object, settled);
}

const promiseThen = Promise.prototype.then;
type Then = (this: unknown, onFulfilled?: unknown, onRejected?: unknown) => unknown;

/**
 * `thenable` behind a Proxy that forwards everything (properties, methods, `instanceof`,
 * writes) to it, except that each `then` the caller calls (an `await` calls one) calls the
 * thenable's own `then` once, with handlers that report the first settlement before they
 * pass it on. Nothing is recorded unless the caller subscribes. A Proxy may not replace a
 * frozen own `then`: such a thenable comes back as a bare thenable with the same forwarding.
 */
function observed<T extends object>(thenable: T, settled: (ok: boolean, outcome: unknown) => void): T {
  let done = false;
  const once = (ok: boolean, outcome: unknown): void => {
    if (done) return;
    done = true;
    settled(ok, outcome);
  };
  /** The caller's `then`, forwarded to the thenable's own `original` once per call. */
  const forward =
    (original: Then): Then =>
    (onFulfilled, onRejected) => {
      try {
        return original.call(
          thenable,
          (value: unknown) => {
            once(true, value);
            return typeof onFulfilled === 'function' ? onFulfilled(value) : value;
          },
          (error: unknown) => {
            once(false, error);
            if (typeof onRejected === 'function') return onRejected(error);
            throw error;
          },
        );
      } catch (error) {
        once(false, error);
        throw error;
      }
    };
  const own = Reflect.getOwnPropertyDescriptor(thenable, 'then');
  if (own !== undefined && own.configurable === false && own.writable === false) {
    // biome-ignore lint/suspicious/noThenProperty: it stands in for a thenable
    return { then: forward(own.value as Then) } as T;
  }
  let original: unknown;
  let forwarding: Then | undefined;
  return new Proxy(thenable, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (key !== 'then' || typeof value !== 'function') return value;
      if (value !== original) {
        original = value;
        forwarding = forward(value as Then); // built once per `then`: `returned.then === returned.then`
      }
      return forwarding;
    },
  });
}
