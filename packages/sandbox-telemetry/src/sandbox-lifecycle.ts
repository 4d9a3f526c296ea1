// One sandbox's lifecycle metrics and Gym 0.7.0's lifecycle spans, gated (as in Gym) by the
// `sandbox` span group. Whether to count a sandbox is decided when its create starts and holds to
// its release, so telemetry switched on mid-life never subtracts what it did not add.

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
import { createInstrument, invalidChoice, observeSettled, perMeter, resolveMeter } from '@gym/core/internal';
import { type Attributes, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { reporter, SCOPE, sandboxGroupOn, sandboxTracer } from './records.js';
import type { SandboxLifecycleOptions, SandboxLifecycleState } from './types.js';

const instrumentsOf = perMeter((meter) => ({
  active: createInstrument(meter, INSTRUMENTS.sandboxActive),
  startupDuration: createInstrument(meter, INSTRUMENTS.sandboxStartupDuration),
  execDuration: createInstrument(meter, INSTRUMENTS.sandboxExecDuration),
  transferDuration: createInstrument(meter, INSTRUMENTS.sandboxTransferDuration),
  createRetries: createInstrument(meter, INSTRUMENTS.sandboxCreateRetry),
}));
type Instruments = ReturnType<typeof instrumentsOf>;
type Settled = (ok: boolean, outcome: unknown, span?: Span) => void;

/**
 * The lifecycle metrics and spans of one sandbox, by `nemo.gym.sandbox.provider`: `gym.sandbox.start`
 * around a create, `gym.sandbox.exec` around an exec, `gym.sandbox.stop` around a close, each the
 * active span of what it wraps, ended when that settles. The constructor throws a `RangeError` for
 * a provider name that is not one (on or off); nothing else here throws.
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
    this.#attributes = Object.freeze({ [ATTR_SANDBOX_PROVIDER]: provider });
    this.#options = { ...options }; // a caller's later edit of its options changes nothing here
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
    return this.#run(SPAN_SANDBOX_START, create, (created, outcome, span) => {
      if (created && span && sandboxId) this.#id = safely(() => sandboxId(outcome as Awaited<T>));
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

  /** Runs `exec` and records its duration (to its settlement when it returns a thenable), however it ends. */
  exec<T>(exec: () => T): T {
    return this.#run(SPAN_SANDBOX_EXEC, exec, this.#timer('execDuration'));
  }

  /** Runs `transfer` (an upload or a download) and records its duration, as {@link exec} does. */
  transfer<T>(transfer: () => T): T {
    return this.#run(undefined, transfer, this.#timer('transferDuration'));
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
    const span = this.#options.owned === false ? undefined : SPAN_SANDBOX_STOP;
    return this.#run(span, close, (closed) => {
      if (closed) this.#released();
    });
  }

  /** Runs `run` as the active span `name` (when spans record); once it settled, calls `settled` and ends the span. */
  #run<T>(name: string | undefined, run: () => T, settled: Settled | undefined): T {
    const tracer = name === undefined ? undefined : sandboxTracer(this.#options);
    const span = tracer && safely(() => tracer.startSpan(name!, { attributes: this.#attributes }));
    if (span === undefined) return settled === undefined ? run() : observeSettled(run, settled);
    return observeSettled(
      () => context.with(trace.setSpan(context.active(), span), run),
      (ok, outcome) => {
        settled?.(ok, outcome, span);
        safely(() => {
          if (this.#id !== undefined) span.setAttribute(ATTR_SANDBOX_ID, this.#id);
          if (!ok) {
            const error = outcome instanceof Error ? outcome : new Error(String(outcome));
            span.recordException(error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
          }
          span.end();
        });
      },
    );
  }

  /** Records the time from now to its call into `histogram`; `undefined` while metrics do not record. */
  #timer(histogram: 'execDuration' | 'transferDuration'): Settled | undefined {
    const instruments = this.#instruments();
    if (instruments === undefined) return undefined;
    const started = performance.now();
    return () => safely(() => instruments[histogram].record(performance.now() - started, this.#attributes));
  }

  #released(): void {
    this.#state = 'released';
    const added = this.#added;
    this.#added = undefined;
    if (added !== undefined) safely(() => added.active.add(-1, this.#attributes));
  }

  /** The instruments to record on now, or `undefined`. Off, one read of the shared state. */
  #instruments(): Instruments | undefined {
    const options = this.#options;
    if (options.meterProvider == null && !isMetricsExporting()) return undefined;
    if (!sandboxGroupOn()) {
      if (!groupOffReported) {
        groupOffReported = true;
        reporter.warnOnce('sandbox-group-off', GROUP_OFF);
      }
      return undefined;
    }
    return safely(() => {
      const meter = resolveMeter(options, SCOPE, reporter);
      return meter && instrumentsOf(meter);
    });
  }
}

let groupOffReported = false; // by this copy: the hot path then skips the reporter
const GROUP_OFF =
  `the 'sandbox' span group is off, so the sandbox lifecycle metrics (gym.sandbox.*) are not recorded ` +
  `(Gym's rule; the default span groups leave it out): add it, e.g. NEMO_GYM_OTEL_SPAN_GROUPS=default,sandbox`;

/** The one edge of every lifecycle recording: a meter or tracer that throws is reported once, never passed on. */
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
