// meteredLimit: a limit whose live state is exported as Gym's gym.concurrency.* series, with
// admission control (a bounded queue and an admission deadline). It wraps the limit the user
// already has and is entered through the same adapter as that limit (so operations that use the
// limit directly and through the metered limit share one FIFO line); what it adds is one
// Lifecycle per call that keeps the counts and enforces admission.
//
// The counts are plain integers in a LimitCell, moved whether or not telemetry is on (`state()`
// always answers); they are exported only while metrics are exporting, by the observable
// instruments of concurrency-metrics.ts.

import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  ATTR_SERVER_NAME,
  COMPONENTS,
  type Component,
  isComponent,
  LIMIT_NAME_PATTERN,
  MAX_LIMIT_NAMES,
  type Outcome,
  SERVER_NAME_PATTERN,
} from '@gym/constants';
import { describeValue, invalidChoice, isMetricsExporting, MAX_TIMER_SECONDS, resolveMeter } from '@gym/core';
import type { Meter, MeterProvider } from '@opentelemetry/api';
import { isSignal } from './abort-watch.js';
import { AdmissionRejectedError, AdmissionTimeoutError } from './admission-errors.js';
import { AsyncMutexAdapter } from './async-mutex-adapter.js';
import { admittedNames, type LimitCell, reportOn } from './concurrency-metrics.js';
import { type Body, type Cancellable, LIMIT_ADAPTER, type Lifecycle, type LimitAdapter } from './internal-types.js';
import { adapterFor, kindOf } from './limit-registry.js';
import { capacityOf, PLimitAdapter } from './p-limit-adapter.js';
import { reporter, SCOPE } from './report.js';
import type {
  MeterableLimit,
  MeteredLimit,
  MeteredLimitOptions,
  MeteredLimitState,
  MeteredRunOptions,
  MutexLike,
  PLimitLike,
  SemaphoreLike,
} from './types.js';

/** Longest admission timeout a Node timer honours, in milliseconds. */
const MAX_TIMEOUT_MS = MAX_TIMER_SECONDS * 1000;

/**
 * Wraps `limit` (an async-mutex `Semaphore` or `Mutex`, a p-limit limiter, or an
 * acquire()/release() limit) in a metered limit: its slots, holders, waiters and admission
 * outcomes are exported as the `gym.concurrency.*` series while metrics are exporting, and it can
 * bound its queue (`maxQueued`) and its waits (`admissionTimeoutMs`). Pass the result to
 * `resourcesOperation` like any limit, or call its `run`.
 *
 * Throws at once on a programming error: `RangeError` for a component, limit name, server name,
 * capacity, timeout or queue bound outside what is allowed, `TypeError` for a value that is no
 * limit. A limit name beyond the 64th distinct one in the process still works but is never
 * exported (one warning).
 */
export function meteredLimit(limit: MeterableLimit, options: MeteredLimitOptions): MeteredLimit {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`meteredLimit: options must be an object; got ${describeValue(options)}`);
  }
  const component: unknown = options.component;
  const limitName: unknown = options.limitName;
  const serverName: unknown = options.serverName;
  if (!isComponent(component)) throw invalidChoice('meteredLimit: options.component', component, COMPONENTS);
  if (typeof limitName !== 'string' || !LIMIT_NAME_PATTERN.test(limitName)) {
    throw invalidChoice('meteredLimit: options.limitName', limitName, `a string matching ${LIMIT_NAME_PATTERN}`);
  }
  if (serverName !== undefined && (typeof serverName !== 'string' || !SERVER_NAME_PATTERN.test(serverName))) {
    throw invalidChoice(
      'meteredLimit: options.serverName',
      serverName,
      `undefined or a string matching ${SERVER_NAME_PATTERN}`,
    );
  }
  const kind = kindOf(limit);
  if (kind === undefined) {
    throw new TypeError(
      'meteredLimit: limit must be an async-mutex Semaphore or Mutex, a p-limit limiter or an object with ' +
        `acquire() (and release()); got ${describeValue(limit)}`,
    );
  }
  if (kind === 'metered') throw new TypeError('meteredLimit: limit is a metered limit already');
  const capacity = capacityFor(kind, limit, options.capacity);
  const admissionTimeoutMs = optionalNumber(
    'admissionTimeoutMs',
    options.admissionTimeoutMs,
    (v) => v > 0 && v <= MAX_TIMEOUT_MS,
    `a number of milliseconds above 0 and at most ${MAX_TIMEOUT_MS}`,
  );
  const maxQueued = optionalNumber(
    'maxQueued',
    options.maxQueued,
    (v) => Number.isSafeInteger(v) && v >= 0,
    'a whole number from 0 up',
  );
  const adapter = adapterFor(limit);
  if (adapter === undefined) throw new TypeError('meteredLimit: limit could not be entered');
  return new MeteredLimitImpl(adapter, {
    component,
    limitName,
    serverName: serverName as string | undefined,
    capacity,
    live: liveCountsFor(limit, adapter, capacity),
    admissionTimeoutMs,
    maxQueued,
    source: meterSourceOf(options),
  });
}

/** Counts read live from the limit instead of counted per call. */
interface LiveCounts {
  readonly active: () => number;
  readonly queued: () => number;
}

interface Settings {
  readonly component: Component;
  readonly limitName: string;
  readonly serverName: string | undefined;
  readonly capacity: () => number;
  readonly live: LiveCounts | undefined;
  readonly admissionTimeoutMs: number | undefined;
  readonly maxQueued: number | undefined;
  readonly source: MeterSource;
}

interface MeterSource {
  readonly meter?: Meter | null | undefined;
  readonly meterProvider?: MeterProvider | null | undefined;
}

/** The metered limit. Internal: users see {@link MeteredLimit}. */
class MeteredLimitImpl implements MeteredLimit {
  readonly component: Component;
  readonly limitName: string;
  readonly serverName: string | undefined;
  /** Public through `state()`; shared with the instruments of every copy of the package. */
  readonly cell: LimitCell;
  readonly admissionTimeoutMs: number | undefined;
  readonly maxQueued: number | undefined;
  private readonly source: MeterSource;
  private readonly injected: boolean;
  /** Admission control is configured: every call gets its own MeteredWait. */
  readonly admission: boolean;
  /** Active and queued are counted per call (else read live from the limit: p-limit). */
  readonly counted: boolean;
  /** Refused: beyond the 64th distinct limit name. Works, is never exported. */
  private readonly refused: boolean;
  /** The meter it is reported on now, if any. */
  private reportedOn: Meter | undefined = undefined;

  constructor(inner: LimitAdapter, settings: Settings) {
    this.component = settings.component;
    this.limitName = settings.limitName;
    this.serverName = settings.serverName;
    this.admissionTimeoutMs = settings.admissionTimeoutMs;
    this.maxQueued = settings.maxQueued;
    this.source = settings.source;
    this.injected = isInjected(settings.source);
    const attributes = Object.freeze(
      settings.serverName === undefined
        ? { [ATTR_CONCURRENCY_COMPONENT]: settings.component, [ATTR_CONCURRENCY_LIMIT_NAME]: settings.limitName }
        : {
            [ATTR_CONCURRENCY_COMPONENT]: settings.component,
            [ATTR_CONCURRENCY_LIMIT_NAME]: settings.limitName,
            [ATTR_SERVER_NAME]: settings.serverName,
          },
    );
    this.cell = {
      attributes,
      key: JSON.stringify([settings.component, settings.limitName, settings.serverName ?? null]),
      hasDeadline: settings.admissionTimeoutMs !== undefined,
      capacity: settings.capacity,
      activeNow: settings.live?.active,
      queuedNow: settings.live?.queued,
      active: 0,
      queued: 0,
      timeouts: 0,
      cancelled: 0,
      rejected: 0,
    };
    this.admission = settings.admissionTimeoutMs !== undefined || settings.maxQueued !== undefined;
    this.counted = settings.live === undefined;
    this.refused = !admitName(settings.limitName);
    Object.defineProperty(this, LIMIT_ADAPTER, { value: new MeteredAdapter(this, inner), enumerable: false });
    this.exportIfExporting();
  }

  run<T>(fn: () => PromiseLike<T> | T, options?: MeteredRunOptions): Promise<T> {
    try {
      if (typeof fn !== 'function')
        throw new TypeError(`MeteredLimit.run: fn must be a function; got ${describeValue(fn)}`);
      const signal: unknown = options === undefined || options === null ? undefined : options.signal;
      if (signal !== undefined && !isSignal(signal)) {
        throw new TypeError(`MeteredLimit.run: options.signal must be an AbortSignal; got ${describeValue(signal)}`);
      }
      if (signal?.aborted) return Promise.reject(signal.reason);
      this.exportIfExporting();
      const adapter = (this as unknown as { [LIMIT_ADAPTER]: LimitAdapter })[LIMIT_ADAPTER];
      return adapter.runUnmeasured<T>(signal, () => fn());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Callers waiting now. */
  queued(): number {
    const cell = this.cell;
    return cell.queuedNow === undefined ? cell.queued : cell.queuedNow();
  }

  state(): MeteredLimitState {
    this.exportIfExporting();
    const cell = this.cell;
    const limit = cell.capacity();
    const active = cell.activeNow === undefined ? cell.active : cell.activeNow();
    return {
      limit,
      active,
      available: Math.max(0, limit - active),
      queued: this.queued(),
      admissionTimeouts: cell.timeouts,
      admissionCancelled: cell.cancelled,
      admissionRejected: cell.rejected,
    };
  }

  /** Starts reporting on the meter it resolves to now, when it is not reported there yet. Never throws. */
  exportIfExporting(): void {
    if (this.refused) return;
    if (this.injected ? this.reportedOn !== undefined : !isMetricsExporting()) return;
    const meter = resolveMeter(this.source, SCOPE, reporter);
    if (meter === undefined || meter === this.reportedOn) return;
    if (reportOn(meter, this, this.cell, !this.injected)) this.reportedOn = meter;
  }
}

/** Enters the wrapped limit with a MeteredWait per call; the caller's Measurement, if any, rides along. */
class MeteredAdapter implements LimitAdapter {
  constructor(
    private readonly owner: MeteredLimitImpl,
    private readonly inner: LimitAdapter,
  ) {}

  // Unmeasured means nobody is exporting through a global meter (resourcesOperation measures
  // whenever metrics export), so there is nothing to start reporting here; `run()` checks itself.
  runUnmeasured<T>(signal: AbortSignal | undefined, body: Body<T>): Promise<T> {
    const owner = this.owner;
    if (signal === undefined && !owner.admission) {
      // The cell is the tally: calls that need nothing per call move its two integers directly.
      return this.inner.runUnmeasured(undefined, body, owner.counted ? owner.cell : undefined);
    }
    return this.inner.runMeasured(signal, body, new MeteredWait(owner, signal, undefined));
  }

  runMeasured<T>(signal: AbortSignal | undefined, body: Body<T>, life: Lifecycle): Promise<T> {
    this.owner.exportIfExporting();
    return this.inner.runMeasured(signal, body, new MeteredWait(this.owner, signal, life));
  }
}

/** One call through a metered limit: its count moves and its admission. Every method is total. */
class MeteredWait implements Lifecycle {
  private waiting = false;
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private wait: Cancellable | undefined = undefined;
  /** The errors this call was turned away with, to tell them from anything else. */
  private timeoutError: AdmissionTimeoutError | undefined = undefined;
  private refusal: AdmissionRejectedError | undefined = undefined;

  constructor(
    private readonly owner: MeteredLimitImpl,
    private readonly signal: AbortSignal | undefined,
    private readonly next: Lifecycle | undefined,
  ) {}

  asked(): void {
    this.waiting = true;
    this.owner.cell.queued++;
    this.next?.asked();
  }

  mustWait(wait: Cancellable, certain: boolean): Error | undefined {
    const owner = this.owner;
    const max = owner.maxQueued;
    if (max !== undefined) {
      const cell = owner.cell;
      // Counted: this call is among the queued already. Read live: it is not in the line yet.
      const others = owner.counted ? cell.queued - 1 : owner.queued();
      // Where the limit cannot say whether a slot is free, this limit's own count decides.
      const full = others >= max && (certain || cell.active + others >= cell.capacity());
      if (full) {
        this.refusal = new AdmissionRejectedError(owner.limitName, max);
        return this.refusal;
      }
    }
    const refusal = this.next?.mustWait(wait, certain);
    if (refusal !== undefined) return refusal;
    const timeoutMs = owner.admissionTimeoutMs;
    if (timeoutMs !== undefined) {
      this.wait = wait;
      this.timer = setTimeout(expire, timeoutMs, this);
      this.timer.unref?.();
    }
    return undefined;
  }

  /** The admission deadline passed while waiting. */
  expired(): void {
    this.timer = undefined;
    const wait = this.wait;
    this.wait = undefined;
    if (wait === undefined || !this.waiting) return;
    this.timeoutError = new AdmissionTimeoutError(this.owner.limitName, this.owner.admissionTimeoutMs ?? 0);
    wait.cancel(this.timeoutError);
  }

  held(): void {
    this.stopTimer();
    if (this.waiting) {
      this.waiting = false;
      this.owner.cell.queued--;
    }
    this.owner.cell.active++;
    this.next?.held();
  }

  gaveUp(reason: unknown): void {
    this.stopTimer();
    if (this.waiting) {
      this.waiting = false;
      const cell = this.owner.cell;
      cell.queued--;
      if (reason !== undefined && reason === this.timeoutError) cell.timeouts++;
      else if (reason !== undefined && reason === this.refusal) cell.rejected++;
      else if (this.signal?.aborted === true && reason === this.signal.reason) cell.cancelled++;
    }
    this.next?.gaveUp(reason);
  }

  ended(outcome: Outcome): void {
    this.owner.cell.active--;
    this.next?.ended(outcome);
  }

  private stopTimer(): void {
    this.wait = undefined;
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

function expire(wait: MeteredWait): void {
  wait.expired();
}

/** Adds the name to the process's admitted names; false (one warning) beyond the bound. */
function admitName(limitName: string): boolean {
  if (admittedNames.has(limitName)) return true;
  if (admittedNames.size >= MAX_LIMIT_NAMES) {
    reporter.warnOnce(
      'limit-names',
      () =>
        `more than ${MAX_LIMIT_NAMES} distinct metered limit names in this process; "${limitName}" and any later new name ` +
        'work but are never exported (limit names are chosen in code and must stay few)',
    );
    return false;
  }
  admittedNames.add(limitName);
  return true;
}

/** The capacity of the limit, as a live reader. Throws on a capacity that is not allowed. */
function capacityFor(kind: string, limit: unknown, given: unknown): () => number {
  const positive = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 1;
  switch (kind) {
    case 'p-limit': {
      if (given !== undefined) {
        throw invalidChoice(
          'meteredLimit: options.capacity',
          given,
          "undefined for a p-limit limiter (its capacity is read live from the limiter's concurrency)",
        );
      }
      const limiter = limit as PLimitLike;
      if (typeof limiter.concurrency !== 'number') {
        throw new TypeError(
          'meteredLimit: the p-limit limiter has no concurrency property (p-limit 6 or later is needed)',
        );
      }
      return () => readConcurrency(limiter);
    }
    case 'mutex': {
      if (given !== undefined && given !== 1) {
        throw invalidChoice('meteredLimit: options.capacity', given, 'undefined or 1 for a Mutex');
      }
      return one;
    }
    case 'semaphore': {
      const value = given === undefined ? (limit as SemaphoreLike).getValue() : given;
      if (!positive(value)) {
        throw invalidChoice(
          given === undefined ? "meteredLimit: the Semaphore's value" : 'meteredLimit: options.capacity',
          value,
          'a whole number from 1 up (pass options.capacity when the semaphore is held while it is wrapped)',
        );
      }
      return () => value;
    }
    default: {
      if (!positive(given)) {
        throw invalidChoice(
          'meteredLimit: options.capacity',
          given,
          'a whole number from 1 up (required for an acquire()/release() limit)',
        );
      }
      return () => given;
    }
  }
}

/**
 * The counts a limit can tell itself, read live (so the metered fast path is the plain one): a
 * p-limit limiter's active calls and its queue plus our line; a semaphore's units in use
 * (capacity − value) and our line; a mutex's lock and our line. An acquire()/release() limit
 * tells nothing: its calls are counted.
 */
function liveCountsFor(limit: unknown, adapter: LimitAdapter, capacity: () => number): LiveCounts | undefined {
  if (adapter instanceof PLimitAdapter) {
    const limiter = limit as PLimitLike;
    return {
      active: () => readCount(() => limiter.activeCount),
      queued: () => readCount(() => Math.max(0, limiter.pendingCount - adapter.placesQueued) + adapter.waiting),
    };
  }
  if (adapter instanceof AsyncMutexAdapter) {
    const queued = () => adapter.waiting;
    if (typeof (limit as Partial<SemaphoreLike>).getValue === 'function') {
      const semaphore = limit as SemaphoreLike;
      return { active: () => readCount(() => Math.max(0, capacity() - semaphore.getValue())), queued };
    }
    const mutex = limit as MutexLike;
    return { active: () => readCount(() => (mutex.isLocked() ? 1 : 0)), queued };
  }
  return undefined;
}

function readCount(read: () => number): number {
  try {
    const value = read();
    return Number.isFinite(value) ? value : 0;
  } catch (error) {
    reporter.warnOnce('limit-read', 'reading the state of a metered limit failed; it reads 0', error);
    return 0;
  }
}

function one(): number {
  return 1;
}

/** p-limit's concurrency now; a limiter whose getter throws counts as 0 slots (reported once). */
function readConcurrency(limiter: PLimitLike): number {
  try {
    const concurrency = capacityOf(limiter);
    return Number.isFinite(concurrency) ? concurrency : 0;
  } catch (error) {
    reporter.warnOnce('p-limit', 'reading the p-limit limiter failed', error);
    return 0;
  }
}

function optionalNumber(
  name: string,
  value: unknown,
  allowed: (value: number) => boolean,
  description: string,
): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && allowed(value)) return value;
  throw invalidChoice(`meteredLimit: options.${name}`, value, `undefined or ${description}`);
}

/**
 * The meter options, read once; a getter that throws is reported and counts as "not injected".
 * Own properties only (@gym/core's rule): a polluted `Object.prototype` injects nothing.
 */
function meterSourceOf(options: MeteredLimitOptions): MeterSource {
  try {
    return {
      meter: Object.hasOwn(options, 'meter') ? options.meter : undefined,
      meterProvider: Object.hasOwn(options, 'meterProvider') ? options.meterProvider : undefined,
    };
  } catch (error) {
    reporter.warnOnce(
      'options',
      'reading options.meter or options.meterProvider threw; the global provider is used',
      error,
    );
    return {};
  }
}

function isInjected(source: MeterSource): boolean {
  const object = (value: unknown) => (typeof value === 'object' || typeof value === 'function') && value !== null;
  return object(source.meter) || object(source.meterProvider);
}
