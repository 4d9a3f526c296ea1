// Periodic resource samples of one sandbox, as spans in the sandbox's trace. The loop is a
// fixed-rate interval that skips (and counts) a tick while the previous sample is still
// running, rather than a chain of timeouts: a slow provider then shows up as a number on
// the final record instead of silently stretching the interval, and two samples of the
// same sandbox never run at once (the running sample is marked before the provider is
// called, so even a `stop()` from inside the provider reuses it). Nothing here throws into
// the sandbox's owner once the loop runs: the provider call and the writing of a record are
// the two edges, each with its one catch. Only a stop timeout out of range (a programming
// error) throws, from the constructor.

import {
  ATTR_SANDBOX_ID,
  ATTR_SANDBOX_RESOURCE_FINAL,
  ATTR_SANDBOX_SAMPLER_DROPPED,
  ATTR_SANDBOX_SAMPLER_ERRORS,
  ATTR_SANDBOX_SAMPLER_SKIPPED,
  SANDBOX_ATTRIBUTE_PREFIX,
  SANDBOX_RESOURCE_PREFIX,
  SPAN_SANDBOX_RESOURCE_SAMPLE,
} from '@gym/constants';
import { describeValue, invalidChoice, MAX_TIMER_SECONDS } from '@gym/core/internal';
import { type Attributes, type Context, SpanKind, type Tracer } from '@opentelemetry/api';
import { isAttributeValue, isReservedKey, recordAttributes } from './attribute-writer.js';
import { checkedInterval } from './sampling-interval.js';
import { reporter } from './scope.js';
import { parentContext, sandboxTracer } from './tracer-gate.js';
import type {
  ResourceProvider,
  ResourceSamplerOptions,
  ResourceSamplerState,
  ResourceSamplerStats,
  SandboxAttributes,
  SandboxAttributeValue,
  SandboxHandle,
} from './types.js';

/** Default of `stopTimeoutSeconds`: long enough for any healthy provider, short enough for a shutdown. */
const DEFAULT_STOP_TIMEOUT_SECONDS = 5;
/** Marks a final sample that did not settle before the stop deadline. */
const TIMED_OUT = Symbol('timed out');
const STOPPED: Promise<void> = Promise.resolve();

type SampleResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * Samples one sandbox's resource use every `intervalSeconds` through
 * `provider.resourceSample(handle)` and writes each sample as a `gym.sandbox.resource.sample`
 * span parented to `handle.context` (else the context active at `start()`), carrying
 * `nemo.gym.sandbox.id`, the sample's values and `attributes` (from {@link recordRequest}).
 *
 * - `start()` begins the loop; idempotent. It does nothing (and `stop()` then records
 *   nothing) when the handle is borrowed (`owned: false`, so a sandbox is never sampled
 *   twice), the interval is 0 (or refused: below 0.1 s, with one warning), the provider has
 *   no `resourceSample`, or nothing would be exported. A stopped sampler does not start again.
 * - `stop()` ends the loop and writes exactly one last record with
 *   `nemo.gym.sandbox.resource.final = true` (plus the sampler's error, dropped and skipped
 *   counts), whatever the provider returns or throws, even a sample that cannot be read;
 *   idempotent, always the same promise, never rejects. If a sample is running it becomes
 *   the final one (the provider is never called twice at once, even by a `stop()` from inside
 *   it); a sample that has not settled within `stopTimeoutSeconds` (default 5 s) is abandoned
 *   and the final record goes out without values.
 * - Provider errors, non-object or unreadable samples and bad values are dropped and counted
 *   in {@link ResourceSampler.stats}, never thrown, and reported through `diag` once per
 *   process and kind of trouble; a tick that finds the previous sample still running is
 *   skipped and counted.
 * - Every timer (the loop and the stop deadline) is `unref()`ed: a sampler never keeps a
 *   process alive.
 */
export class ResourceSampler<H extends SandboxHandle = SandboxHandle> {
  readonly #provider: ResourceProvider<H>;
  readonly #handle: H;
  readonly #attributes: SandboxAttributes;
  readonly #intervalMs: number;
  readonly #stopTimeoutMs: number;
  readonly #options: ResourceSamplerOptions | undefined;
  readonly #stats = { samples: 0, errors: 0, dropped: 0, skipped: 0 };
  #state: ResourceSamplerState = 'idle';
  #timer: ReturnType<typeof setInterval> | undefined;
  #inFlight: Promise<SampleResult> | undefined;
  #stopped: Promise<void> | undefined;
  // Set by start(), once the gate is passed.
  #tracer: Tracer | undefined;
  #parent: Context | undefined;

  /**
   * @param provider the sandbox's provider; only `resourceSample` is used.
   * @param handle the sandbox; checked at `start()`.
   * @param attributes carried by every record (what {@link recordRequest} returned).
   * @param intervalSeconds seconds between samples (usually {@link samplingInterval}()); 0
   *   disables the sampler, and so does a value outside 0.1 to 2147483.647 (refused with one
   *   warning).
   * @throws RangeError when `options.stopTimeoutSeconds` is not a number of seconds from 0 to 2147483.647.
   */
  constructor(
    provider: ResourceProvider<H>,
    handle: H,
    attributes: SandboxAttributes,
    intervalSeconds: number,
    options?: ResourceSamplerOptions,
  ) {
    this.#provider = provider;
    this.#handle = handle;
    this.#attributes = attributes;
    this.#intervalMs = checkedInterval(intervalSeconds, 'ResourceSampler intervalSeconds') * 1000;
    const stopTimeout = options?.stopTimeoutSeconds ?? DEFAULT_STOP_TIMEOUT_SECONDS;
    if (!(stopTimeout >= 0 && stopTimeout <= MAX_TIMER_SECONDS)) {
      throw invalidChoice('stopTimeoutSeconds', stopTimeout, `a number of seconds from 0 to ${MAX_TIMER_SECONDS}`);
    }
    this.#stopTimeoutMs = stopTimeout * 1000;
    this.#options = options;
  }

  /** Live counters (the same object for the sampler's whole life). */
  get stats(): Readonly<ResourceSamplerStats> {
    return this.#stats;
  }

  /** `idle` until a loop starts (and while start() had nothing to do), then `running`, `stopping`, `stopped`. */
  get state(): ResourceSamplerState {
    return this.#state;
  }

  /**
   * Starts the sampling loop; does nothing when already started or stopped, or when there
   * is nothing to do (see the class notes).
   */
  start(): void {
    if (this.#state !== 'idle' || this.#intervalMs === 0) return;
    const tracer = sandboxTracer(this.#options);
    const handle = this.#handle;
    if (tracer === undefined || !handle.owned || typeof this.#provider.resourceSample !== 'function') return;
    this.#tracer = tracer;
    this.#parent = parentContext(handle.context);
    this.#state = 'running';
    this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
    this.#timer.unref();
  }

  /**
   * Stops the loop and writes the one final record (only if a loop ran). Idempotent: every
   * call returns the same promise, which resolves once the final record is written and
   * never rejects.
   */
  stop(): Promise<void> {
    if (this.#stopped !== undefined) return this.#stopped;
    if (this.#state !== 'running') {
      this.#state = 'stopped';
      this.#stopped = STOPPED;
      return STOPPED;
    }
    this.#state = 'stopping';
    clearInterval(this.#timer);
    this.#timer = undefined;
    let finished!: () => void;
    // Published before the provider may run again: a stop() from inside it gets this promise.
    this.#stopped = new Promise<void>((resolve) => {
      finished = resolve;
    });
    const last = this.#inFlight ?? this.#startSample();
    void this.#withDeadline(last).then((result) => {
      try {
        this.#record(result, true);
      } finally {
        this.#inFlight = undefined;
        this.#state = 'stopped';
        finished();
      }
    });
    return this.#stopped;
  }

  #tick(): void {
    if (this.#inFlight !== undefined) {
      this.#stats.skipped++;
      return;
    }
    const pending = this.#startSample();
    void pending.then((result) => {
      // Once stopping, stop() owns this result: it becomes the final record.
      if (this.#state !== 'running') return;
      this.#inFlight = undefined;
      this.#record(result, false);
    });
  }

  /**
   * One provider call, marked as the running sample before the provider runs. The promise
   * never rejects (a synchronous throw, a rejection and a hostile thenable all become a
   * failed result).
   */
  #startSample(): Promise<SampleResult> {
    let settle!: (result: SampleResult) => void;
    const pending = new Promise<SampleResult>((resolve) => {
      settle = resolve;
    });
    this.#inFlight = pending;
    try {
      Promise.resolve(this.#provider.resourceSample!(this.#handle)).then(
        (value) => settle({ ok: true, value }),
        (error: unknown) => settle({ ok: false, error }),
      );
    } catch (error) {
      settle({ ok: false, error });
    }
    return pending;
  }

  /** `pending`'s result, or TIMED_OUT when it has not settled within the stop timeout. */
  #withDeadline(pending: Promise<SampleResult>): Promise<SampleResult | typeof TIMED_OUT> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(TIMED_OUT), this.#stopTimeoutMs);
      // The deadline bounds a wait; it is no reason for the process to stay alive.
      timer.unref();
      void pending.then((result) => {
        clearTimeout(timer);
        resolve(result);
      });
    });
  }

  /**
   * Counts what went wrong and writes the record; a regular tick with no good value writes
   * nothing. Called from timer and promise callbacks, so nothing may escape: this is the
   * sampler's recording edge.
   */
  #record(result: SampleResult | typeof TIMED_OUT, final: boolean): void {
    try {
      let values: Record<string, SandboxAttributeValue> | undefined;
      if (result === TIMED_OUT) {
        this.#fail(
          'timeout',
          () => `the final sample did not settle within ${this.#stopTimeoutMs} ms; recorded without it`,
        );
      } else if (!result.ok) {
        this.#fail('threw', () => 'the provider failed to sample; the sample was dropped', result.error);
      } else {
        values = this.#clean(result.value);
      }
      if (!final && values === undefined) return;
      // Own keys first (ids, the final flag and counters, then the sample), the caller's last:
      // the SDK's attribute count limit then drops caller keys first.
      const own: Attributes = { [ATTR_SANDBOX_ID]: this.#handle.id };
      if (final) {
        own[ATTR_SANDBOX_RESOURCE_FINAL] = true;
        own[ATTR_SANDBOX_SAMPLER_ERRORS] = this.#stats.errors;
        own[ATTR_SANDBOX_SAMPLER_DROPPED] = this.#stats.dropped;
        own[ATTR_SANDBOX_SAMPLER_SKIPPED] = this.#stats.skipped;
      }
      if (values !== undefined) Object.assign(own, values);
      this.#tracer!.startSpan(
        SPAN_SANDBOX_RESOURCE_SAMPLE,
        { kind: SpanKind.INTERNAL, attributes: recordAttributes(this.#attributes, own) },
        this.#parent,
      ).end();
      this.#stats.samples++;
    } catch (error) {
      this.#fail('span', () => 'writing a gym.sandbox.resource.sample span failed; it was dropped', error);
    }
  }

  /** The sample's good values (undefined when none), counting each bad one as dropped. */
  #clean(sample: unknown): Record<string, SandboxAttributeValue> | undefined {
    if (sample === null || typeof sample !== 'object' || Array.isArray(sample)) {
      this.#fail('shape', () => `the provider returned ${describeValue(sample)} instead of an attributes object`);
      return undefined;
    }
    let values: Record<string, SandboxAttributeValue> | undefined;
    for (const [key, value] of Object.entries(sample)) {
      if (this.#acceptable(key, value)) {
        values ??= {};
        values[key] = value;
      } else {
        this.#stats.dropped++;
        reporter.warnOnce(
          'sampler-value',
          () =>
            `dropped sample value ${key}=${describeValue(value)}: keys must start with '${SANDBOX_ATTRIBUTE_PREFIX}' ` +
            'and not be reserved, values must be strings, booleans or finite numbers (later ones in this process are only counted)',
        );
      }
    }
    return values;
  }

  #acceptable(key: string, value: unknown): value is SandboxAttributeValue {
    return (
      key.startsWith(SANDBOX_ATTRIBUTE_PREFIX) &&
      !isReservedSampleKey(key) &&
      !Object.hasOwn(this.#attributes, key) &&
      isAttributeValue(value)
    );
  }

  #fail(kind: string, message: () => string, error?: unknown): void {
    this.#stats.errors++;
    reporter.warnOnce(
      `sampler-${kind}`,
      () => `sandbox ${this.#handle.id}: ${message()} (later ones in this process are only counted)`,
      error,
    );
  }
}

/** Keys a sample may not set: the ids, the request/allocation families, the final flag and the sampler's counters. */
function isReservedSampleKey(key: string): boolean {
  if (key === ATTR_SANDBOX_RESOURCE_FINAL || key.startsWith(`${SANDBOX_RESOURCE_PREFIX}sampler.`)) return true;
  return isReservedKey(key) && !key.startsWith(SANDBOX_RESOURCE_PREFIX);
}
