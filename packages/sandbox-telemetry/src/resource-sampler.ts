// Periodic resource samples of one sandbox, as spans in its trace. A fixed-rate interval skips
// (and counts) a tick while the previous sample still runs: a slow provider shows up as a number
// on the final record instead of silently stretching the interval.

import {
  ATTR_SANDBOX_ID,
  ATTR_SANDBOX_PREFIX,
  ATTR_SANDBOX_RESOURCE_FINAL,
  ATTR_SANDBOX_RESOURCE_SAMPLER_DROPPED,
  ATTR_SANDBOX_RESOURCE_SAMPLER_ERRORS,
  ATTR_SANDBOX_RESOURCE_SAMPLER_SKIPPED,
  SPAN_SANDBOX_RESOURCE_SAMPLE,
} from '@gym/constants';
import { getTelemetryState, isTracesExporting } from '@gym/core';
import {
  describeValue,
  GYM_VARIABLES,
  invalidChoice,
  MAX_TIMER_SECONDS,
  MIN_SAMPLE_INTERVAL_SECONDS,
  readGymVariable,
} from '@gym/core/internal';
import { type Attributes, context } from '@opentelemetry/api';
import { isAttributeValue, isFreeKey, reporter, sandboxGroupOn, sandboxTracer, writeRecord } from './records.js';
import type {
  ResourceProvider,
  ResourceSamplerOptions,
  ResourceSamplerState,
  ResourceSamplerStats,
  SandboxAttributes,
  SandboxHandle,
} from './types.js';

/** Marks a final sample that did not settle before the stop deadline. */
const TIMED_OUT = Symbol('timed out');
type Outcome = { readonly value: unknown } | { readonly error: unknown } | typeof TIMED_OUT;

/**
 * Seconds between sandbox resource samples while traces export and the `sandbox` span group is
 * on (the published state's, else `NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS`), else 0.
 */
export function samplingInterval(): number {
  if (!isTracesExporting() || !sandboxGroupOn()) return 0;
  const state = getTelemetryState();
  if (state !== undefined) {
    return checkedInterval(state.sandboxSampleIntervalSeconds, 'the published sandboxSampleIntervalSeconds');
  }
  const read = readGymVariable(process.env, GYM_VARIABLES.sandboxResourceSampleIntervalSeconds);
  if (read.ok) return read.value;
  reporter.warnOnce(
    `interval:${read.from.name}=${read.from.value}`,
    `${read.message}; sandbox resource sampling is off`,
  );
  return 0;
}

/** `seconds` when it is 0 or a timer can honour it from the floor up, else 0 with one warning per value. */
function checkedInterval(seconds: number, where: string): number {
  if (seconds === 0 || (seconds >= MIN_SAMPLE_INTERVAL_SECONDS && seconds <= MAX_TIMER_SECONDS)) return seconds;
  reporter.warnOnce(
    `interval:${where}=${seconds}`,
    `${where} = ${seconds} s is refused (allowed: 0, or ${MIN_SAMPLE_INTERVAL_SECONDS} to ${MAX_TIMER_SECONDS} s); ` +
      'sandbox resource sampling is off',
  );
  return 0;
}

/**
 * Samples one sandbox every `intervalSeconds` through `provider.resourceSample(handle)` into
 * `gym.sandbox.resource.sample` spans parented to `handle.context` (else the context active at
 * `start()`), carrying the sandbox id, the sample and `attributes` (from {@link recordRequest}).
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
  #inFlight: Promise<Outcome> | undefined;
  #stopped: Promise<void> | undefined;
  #write: ((own: Attributes) => void) | undefined;

  /**
   * @param intervalSeconds usually {@link samplingInterval}(); 0, or a value outside 0.1 to
   *   2147483.647 (one warning), leaves the sampler off.
   * @throws RangeError for a `stopTimeoutSeconds` out of range.
   */
  constructor(
    provider: ResourceProvider<H>,
    handle: H,
    attributes: SandboxAttributes,
    intervalSeconds: number,
    options?: ResourceSamplerOptions,
  ) {
    const stopTimeout = options?.stopTimeoutSeconds ?? 5;
    if (!(stopTimeout >= 0 && stopTimeout <= MAX_TIMER_SECONDS)) {
      throw invalidChoice('stopTimeoutSeconds', stopTimeout, `a number of seconds from 0 to ${MAX_TIMER_SECONDS}`);
    }
    this.#provider = provider;
    this.#handle = handle;
    this.#attributes = attributes;
    this.#intervalMs = checkedInterval(intervalSeconds, 'ResourceSampler intervalSeconds') * 1000;
    this.#stopTimeoutMs = stopTimeout * 1000;
    this.#options = options;
  }

  get stats(): Readonly<ResourceSamplerStats> {
    return this.#stats;
  }

  get state(): ResourceSamplerState {
    return this.#state;
  }

  /** Starts the loop, unless already started or stopped, borrowed, off or nothing exporting. */
  start(): void {
    if (this.#state !== 'idle' || this.#intervalMs === 0) return;
    const tracer = sandboxTracer(this.#options);
    if (tracer === undefined || !this.#handle.owned || this.#provider.resourceSample === undefined) return;
    const parent = this.#handle.context ?? context.active();
    this.#write = (own) => writeRecord(tracer, SPAN_SANDBOX_RESOURCE_SAMPLE, this.#attributes, own, parent);
    this.#state = 'running';
    this.#timer = setInterval(() => this.#tick(), this.#intervalMs).unref();
  }

  /**
   * Ends the loop and writes the one final record (if a loop ran), made of the running sample
   * if there is one, else of a last one. Always the same promise; it never rejects.
   */
  stop(): Promise<void> {
    if (this.#stopped !== undefined) return this.#stopped;
    if (this.#state !== 'running') {
      this.#state = 'stopped';
      this.#stopped = Promise.resolve();
      return this.#stopped;
    }
    this.#state = 'stopping';
    clearInterval(this.#timer);
    let finished!: () => void;
    // Published before the provider may run again: a stop() from inside it gets this promise.
    this.#stopped = new Promise<void>((resolve) => {
      finished = resolve;
    });
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<Outcome>((resolve) => {
      deadline = setTimeout(resolve, this.#stopTimeoutMs, TIMED_OUT).unref(); // it keeps no process alive
    });
    void Promise.race([this.#inFlight ?? this.#sample(), timedOut]).then((outcome) => {
      clearTimeout(deadline);
      this.#record(outcome, true);
      this.#state = 'stopped';
      finished();
    });
    return this.#stopped;
  }

  #tick(): void {
    if (this.#inFlight !== undefined) {
      this.#stats.skipped++;
      return;
    }
    void this.#sample().then((outcome) => {
      if (this.#state !== 'running') return; // once stopping, this sample is stop()'s final record
      this.#inFlight = undefined;
      this.#record(outcome, false);
    });
  }

  /** One provider call, published as the running sample before the provider runs. Never rejects. */
  #sample(): Promise<Outcome> {
    let settle!: (outcome: Outcome) => void;
    const pending = new Promise<Outcome>((resolve) => {
      settle = resolve;
    });
    this.#inFlight = pending;
    try {
      Promise.resolve(this.#provider.resourceSample!(this.#handle)).then(
        (value) => settle({ value }),
        (error: unknown) => settle({ error }),
      );
    } catch (error) {
      settle({ error });
    }
    return pending;
  }

  /** Counts what went wrong and writes the record; a regular tick with no good value writes nothing. */
  #record(outcome: Outcome, final: boolean): void {
    try {
      let values: Attributes | undefined;
      if (outcome === TIMED_OUT) {
        this.#fail('timeout', `the final sample did not settle within ${this.#stopTimeoutMs} ms; recorded without it`);
      } else if ('error' in outcome) {
        this.#fail('threw', 'the provider failed to sample; the sample was dropped', outcome.error);
      } else {
        values = this.#clean(outcome.value);
      }
      if (!final && values === undefined) return;
      const own: Attributes = { [ATTR_SANDBOX_ID]: this.#handle.id };
      if (final) {
        own[ATTR_SANDBOX_RESOURCE_FINAL] = true;
        own[ATTR_SANDBOX_RESOURCE_SAMPLER_ERRORS] = this.#stats.errors;
        own[ATTR_SANDBOX_RESOURCE_SAMPLER_DROPPED] = this.#stats.dropped;
        own[ATTR_SANDBOX_RESOURCE_SAMPLER_SKIPPED] = this.#stats.skipped;
      }
      this.#write!({ ...own, ...values });
      this.#stats.samples++;
    } catch (error) {
      this.#fail('span', 'writing a gym.sandbox.resource.sample span failed; it was dropped', error);
    }
  }

  /** The sample's good values (undefined when none), counting each bad one as dropped. */
  #clean(sample: unknown): Attributes | undefined {
    if (sample === null || typeof sample !== 'object' || Array.isArray(sample)) {
      this.#fail('shape', `the provider returned ${describeValue(sample)} instead of an attributes object`);
      return undefined;
    }
    let values: Attributes | undefined;
    for (const [key, value] of Object.entries(sample)) {
      // A carried key is the caller's: a sample may not replace it.
      if (isFreeKey(key, true) && !(key in this.#attributes) && isAttributeValue(value)) {
        values ??= {};
        values[key] = value;
        continue;
      }
      this.#stats.dropped++;
      reporter.warnOnce(
        'sampler-value',
        () =>
          `dropped sample value ${key}=${describeValue(value)}: keys must start with '${ATTR_SANDBOX_PREFIX}' ` +
          'and not be reserved, values must be strings, booleans or finite numbers (later ones in this process are only counted)',
      );
    }
    return values;
  }

  #fail(kind: string, message: string, error?: unknown): void {
    this.#stats.errors++;
    reporter.warnOnce(
      `sampler-${kind}`,
      () => `sandbox ${this.#handle.id}: ${message} (later ones in this process are only counted)`,
      error,
    );
  }
}
