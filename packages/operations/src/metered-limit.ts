// meteredLimit: a limit the user already has, with admission control, exported as the seven
// gym.concurrency.* instruments. One attribute set is one exported limit: a newer metered limit
// with the same names takes the older one's place, whose admission totals carry over so that a
// counter never goes backwards.

import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  ATTR_SERVER_NAME,
  COMPONENTS,
  INSTRUMENTS,
  isComponent,
  LIMIT_NAME_PATTERN,
  MAX_LIMIT_NAMES,
  SERVER_NAME_PATTERN,
} from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import {
  createInstrument,
  describeValue,
  invalidChoice,
  MAX_TIMER_SECONDS,
  perMeter,
  resolveMeter,
} from '@gym/core/internal';
import type { Attributes, Meter } from '@opentelemetry/api';
import { type Gate, gateOf, LIMIT_SHAPES, type LiveReaders } from './limits.js';
import { type Admission, type AdmissionTotals, checkSignal, OFF, run } from './run.js';
import { reporter, SCOPE, warnIfSecondCopy } from './scope.js';
import type {
  MeterableLimit,
  MeteredLimit,
  MeteredLimitOptions,
  MeteredLimitState,
  MeteredRunOptions,
} from './types.js';

/** Longest admission timeout a Node timer honours, in milliseconds. */
const MAX_TIMEOUT_MS = MAX_TIMER_SECONDS * 1000;

/**
 * Wraps `limit` in a metered limit: its slots, holders, waiters and admission outcomes are
 * exported as the `gym.concurrency.*` series while metrics export, and it can bound its queue
 * (`maxQueued`) and its waits (`admissionTimeoutMs`). Throws at once on a programming error
 * (`RangeError` for an option outside what is allowed, `TypeError` for a value that is no limit).
 */
export function meteredLimit(limit: MeterableLimit, options: MeteredLimitOptions): MeteredLimit {
  const { component, limitName, serverName, admissionTimeoutMs: timeout, maxQueued } = options;
  const bad = (option: string, value: unknown, allowed: readonly string[] | string) =>
    invalidChoice(`meteredLimit: options.${option}`, value, allowed);
  if (!isComponent(component)) throw bad('component', component, COMPONENTS);
  if (typeof limitName !== 'string' || !LIMIT_NAME_PATTERN.test(limitName)) {
    throw bad('limitName', limitName, `a string matching ${LIMIT_NAME_PATTERN}`);
  }
  if (serverName !== undefined && (typeof serverName !== 'string' || !SERVER_NAME_PATTERN.test(serverName))) {
    throw bad('serverName', serverName, `undefined or a string matching ${SERVER_NAME_PATTERN}`);
  }
  if (timeout !== undefined && !(timeout > 0 && timeout <= MAX_TIMEOUT_MS)) {
    throw bad(
      'admissionTimeoutMs',
      timeout,
      `undefined or a number of milliseconds above 0 and at most ${MAX_TIMEOUT_MS}`,
    );
  }
  if (maxQueued !== undefined && !(Number.isSafeInteger(maxQueued) && maxQueued >= 0)) {
    throw bad('maxQueued', maxQueued, 'undefined or a whole number from 0 up');
  }
  // A metered limit has no acquire(): it is no limit to gateOf.
  const gate = gateOf(limit);
  if (gate === undefined) {
    throw new TypeError(
      `meteredLimit: limit must be ${LIMIT_SHAPES} (not metered already); got ${describeValue(limit)}`,
    );
  }
  return new MeteredLimitImpl(gate, options);
}

const admittedNames = { limit: new Set<string>(), server: new Set<string>() };

/** The metered limit. Internal: users see {@link MeteredLimit}. */
export class MeteredLimitImpl implements MeteredLimit {
  readonly key: string;
  readonly attributes: Attributes;
  /** Its own counts of the calls made through it, its admission rules, and the limiter read live. */
  readonly admission: Admission & LiveReaders;
  /** The options when a provider was injected; `undefined`: the global provider. */
  private readonly source: MeteredLimitOptions | undefined;
  /** Where it is exported, once it is; `null` once closed or when its names were refused. */
  private sets: Sets | undefined | null = undefined;

  constructor(
    readonly gate: Gate,
    options: MeteredLimitOptions,
  ) {
    const { component, limitName, serverName } = options;
    const counts = { queued: 0, active: 0, handed: 0, timeouts: 0, cancelled: 0, rejected: 0, carriedInto: undefined };
    const live = gate.live(options.capacity, counts);
    this.key = JSON.stringify([component, limitName, serverName ?? null]);
    this.attributes = Object.freeze({
      [ATTR_CONCURRENCY_COMPONENT]: component,
      [ATTR_CONCURRENCY_LIMIT_NAME]: limitName,
      ...(serverName === undefined ? {} : { [ATTR_SERVER_NAME]: serverName }),
    });
    this.admission = Object.assign(counts, live, {
      free: () => live.available() > 0,
      limitName,
      maxQueued: options.maxQueued,
      timeoutMs: options.admissionTimeoutMs,
    });
    this.source = options.meterProvider != null ? options : undefined;
    if (!admitted('limit', limitName) || !admitted('server', serverName)) this.sets = null;
    this.exportIfExporting(isMetricsExporting());
  }

  async run<T>(fn: () => PromiseLike<T> | T, options?: MeteredRunOptions): Promise<T> {
    if (typeof fn !== 'function') {
      throw new TypeError(`MeteredLimit.run: fn must be a function; got ${describeValue(fn)}`);
    }
    const signal = checkSignal(options?.signal, 'MeteredLimit.run: options.signal');
    if (signal?.aborted) throw signal.reason;
    this.exportIfExporting(isMetricsExporting());
    return run(this.gate, this.admission, signal, () => fn(), OFF);
  }

  state(): MeteredLimitState {
    this.exportIfExporting(isMetricsExporting());
    const a = this.admission;
    return {
      limit: a.limit(),
      active: a.active,
      available: a.available(),
      queued: a.queued,
      admissionTimeouts: a.timeouts,
      admissionCancelled: a.cancelled,
      admissionRejected: a.rejected,
    };
  }

  close(): void {
    const set = this.sets?.get(this.key);
    if (set?.current === this) retire(set);
    this.admission.carriedInto = undefined;
    this.sets = null;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /** Starts reporting it, when it is not reported yet and can be (`exporting`: isMetricsExporting()). Never throws. */
  exportIfExporting(exporting: boolean): void {
    const global = this.source === undefined;
    // A global limit asks on every call while exporting: a new global meter must report it too.
    if (this.sets === null || (global ? !exporting : this.sets !== undefined)) return;
    const meter = resolveMeter(this.source, SCOPE, reporter);
    let instruments: ConcurrencyInstruments | undefined;
    try {
      instruments = meter && instrumentsOf(meter);
    } catch (error) {
      reporter.warnOnce(
        'concurrency-instruments',
        'creating the gym.concurrency instruments failed; metered limits are not reported, the next use tries again',
        error,
      );
    }
    if (instruments === undefined || this.sets !== undefined) return;
    this.sets = global ? GLOBAL : instruments.sets;
    add(this.sets, this);
  }
}

/** Admits `name` to the export; false (one warning) beyond the bound. */
function admitted(what: 'limit' | 'server', name: string | undefined): boolean {
  const names = admittedNames[what];
  if (name !== undefined && names.size < MAX_LIMIT_NAMES) names.add(name);
  if (name === undefined || names.has(name)) return true;
  reporter.warnOnce(
    `${what}-names`,
    `more than ${MAX_LIMIT_NAMES} distinct metered ${what} names in this process; "${name}" and any later new name ` +
      'work but are never exported (names are chosen in code and must stay few)',
  );
  return false;
}

const TOTALS = ['timeouts', 'cancelled', 'rejected'] as const satisfies readonly (keyof AdmissionTotals)[];

/** One attribute set: its current limit, and the admission totals of the limits it replaced. */
type LimitSet = { current: MeteredLimitImpl | undefined } & AdmissionTotals;

/** Exported limits by attribute set (`MeteredLimitImpl.key`). */
type Sets = Map<string, LimitSet>;

function add(sets: Sets, limit: MeteredLimitImpl): void {
  const set = sets.get(limit.key) ?? { current: undefined, timeouts: 0, cancelled: 0, rejected: 0 };
  sets.set(limit.key, set);
  retire(set);
  set.current = limit;
}

/** The set's current limit leaves the export: its totals stay in the set, and so do any it counts later. */
function retire(set: LimitSet): void {
  const admission = set.current?.admission;
  set.current = undefined;
  if (admission === undefined) return;
  for (const total of TOTALS) set[total] += admission[total];
  admission.carriedInto = set;
}

/** Limits that record through the global provider: reported only while metrics are exporting. */
const GLOBAL: Sets = new Map();

/** The seven instruments of one meter, the limits given that meter, and GLOBAL while it is the global meter. */
class ConcurrencyInstruments {
  readonly sets: Sets = new Map();

  constructor(meter: Meter) {
    warnIfSecondCopy();
    const limit = createInstrument(meter, INSTRUMENTS.concurrencyLimit);
    const active = createInstrument(meter, INSTRUMENTS.concurrencyActive);
    const available = createInstrument(meter, INSTRUMENTS.concurrencyAvailable);
    const queueDepth = createInstrument(meter, INSTRUMENTS.concurrencyQueueDepth);
    const timeouts = createInstrument(meter, INSTRUMENTS.admissionTimeouts);
    const cancelled = createInstrument(meter, INSTRUMENTS.admissionCancelled);
    const rejected = createInstrument(meter, INSTRUMENTS.admissionRejected);
    const all = [limit, active, available, queueDepth, timeouts, cancelled, rejected];
    meter.addBatchObservableCallback((result) => {
      // A meter of a provider that is no longer the global one keeps only the limits given it.
      const global = resolveMeter(undefined, SCOPE, reporter) === meter;
      for (const sets of global ? [this.sets, GLOBAL] : [this.sets]) {
        for (const set of sets.values()) {
          if (set.current === undefined) continue;
          const { attributes, admission: a } = set.current;
          const slots = a.limit();
          if (Number.isFinite(slots)) {
            result.observe(limit, slots, attributes);
            result.observe(available, a.available(), attributes);
          }
          result.observe(active, a.active, attributes);
          result.observe(queueDepth, a.queued, attributes);
          if (a.timeoutMs !== undefined) result.observe(timeouts, set.timeouts + a.timeouts, attributes);
          result.observe(cancelled, set.cancelled + a.cancelled, attributes);
          result.observe(rejected, set.rejected + a.rejected, attributes);
        }
      }
    }, all);
  }
}

const instrumentsOf = perMeter((meter) => new ConcurrencyInstruments(meter));
