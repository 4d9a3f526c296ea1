// meteredLimit: a limit with admission control, exported as gym.concurrency.* (summed by attribute set, idle once when it leaves).

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
  resolveMeter,
  sharedSlot,
} from '@gym/core/internal';
import type { Attributes, Meter } from '@opentelemetry/api';
import { type Gate, gateOf, notALimit } from './limits.js';
import { type Admission, type AdmissionTotals, checkSignal, type Limiter, OFF, run } from './run.js';
import { now, reporter, SCOPE } from './scope.js';
import type {
  CapacityOption,
  MeterableLimit,
  MeteredLimit,
  MeteredLimitOptions,
  MeteredLimitState,
  MeteredRunOptions,
} from './types.js';

const MAX_TIMEOUT_MS = MAX_TIMER_SECONDS * 1000;

/** One attribute set of a registry: its metered limits (held weakly), their admission totals, and whether one has a deadline. */
interface Entry {
  readonly attributes: Attributes;
  members: WeakRef<Admission>[];
  readonly totals: AdmissionTotals;
  timed: boolean;
}

type Registry = Map<string, Entry>;

// Shared by every copy of the package (core's shared slot), so their limits are summed in one export.
const shared = sharedSlot('@gym/operations/concurrency@1', () => ({
  meters: new WeakMap<Meter, ConcurrencyInstruments>(),
  /** Limits that record through the global provider: reported by the global meter of the moment. */
  global: new Map() as Registry,
  limiters: new WeakMap<object, Limiter>(),
  names: { limit: new Set<string>(), server: new Set<string>() },
}));

/** Wraps `limit` in a metered limit, exported while metrics export; throws at once on a programming error. */
export function meteredLimit<L extends MeterableLimit>(
  limit: L,
  options: MeteredLimitOptions & CapacityOption<L>,
): MeteredLimit {
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
  return new MeteredLimitImpl(limit, options);
}

/** The slots a limit exports: what it reads, never below what is held through it. */
function slotsOf(limiter: Limiter): number {
  return Math.max(limiter.limit(), limiter.active);
}

export class MeteredLimitImpl implements MeteredLimit {
  readonly key: string;
  readonly attributes: Attributes;
  readonly admission: Admission;
  /** The options when a provider was injected; `undefined`: the global provider. */
  private readonly source: MeteredLimitOptions | undefined;
  /** Where it is exported, once it is; `null` once closed or when its names were refused. */
  private registry: Registry | undefined | null = undefined;

  readonly gate: Gate;

  constructor(limit: MeterableLimit, options: MeteredLimitOptions) {
    const gate = gateOf(limit);
    if (gate === undefined) throw notALimit(limit, 'meteredLimit', ' (not metered already)');
    this.gate = gate;
    // One limiter's counts, whose live readers follow the capacity given last.
    const counts = shared.limiters.get(limit) ?? { queued: 0, active: 0, handed: 0, waits: undefined, waitsFrom: 0 };
    const limiter: Limiter = Object.assign(counts, { passes: undefined }, gate.live(options.capacity, counts));
    shared.limiters.set(limit, limiter);
    const { component, limitName, serverName } = options;
    this.key = JSON.stringify([component, limitName, serverName ?? null]);
    this.attributes = Object.freeze({
      [ATTR_CONCURRENCY_COMPONENT]: component,
      [ATTR_CONCURRENCY_LIMIT_NAME]: limitName,
      ...(serverName === undefined ? {} : { [ATTR_SERVER_NAME]: serverName }),
    });
    this.admission = {
      limitName,
      maxQueued: options.maxQueued,
      timeoutMs: options.admissionTimeoutMs,
      limiter,
      totals: { timeouts: 0, cancelled: 0, rejected: 0 },
      exported: undefined,
    };
    this.source = options.meterProvider != null ? options : undefined;
    if (!admitted('limit', limitName) || !admitted('server', serverName)) this.registry = null;
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
    const { limiter, totals } = this.admission;
    return {
      limit: slotsOf(limiter),
      active: limiter.active,
      available: limiter.available(),
      queued: limiter.queued,
      admissionTimeouts: totals.timeouts,
      admissionCancelled: totals.cancelled,
      admissionRejected: totals.rejected,
    };
  }

  close(): void {
    const entry = this.registry?.get(this.key);
    if (entry !== undefined) entry.members = entry.members.filter((member) => member.deref() !== this.admission);
    this.admission.exported = undefined;
    this.registry = null;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /** Starts reporting it when it is not reported yet and can be. Never throws. */
  exportIfExporting(exporting: boolean): void {
    const global = this.source === undefined;
    // A global limit asks on every call while exporting: a new global meter must report it too.
    if (this.registry === null || (global ? !exporting : this.registry !== undefined)) return;
    const meter = resolveMeter(this.source, SCOPE, reporter);
    if (meter === undefined) return;
    let instruments = shared.meters.get(meter);
    try {
      instruments ??= new ConcurrencyInstruments(meter);
    } catch (error) {
      reporter.warnOnce(
        'concurrency-instruments',
        'creating gym.concurrency instruments failed; the next use tries',
        error,
      );
      return;
    }
    if (this.registry !== undefined) return;
    this.registry = global ? shared.global : instruments.registry;
    const entry = this.registry.get(this.key) ?? {
      attributes: this.attributes,
      members: [],
      totals: { timeouts: 0, cancelled: 0, rejected: 0 },
      timed: false,
    };
    this.registry.set(this.key, entry);
    const admission = this.admission;
    entry.members.push(new WeakRef(admission));
    entry.timed ||= admission.timeoutMs !== undefined;
    addTotals(entry.totals, admission.totals);
    admission.exported = entry.totals;
    admission.limiter.waits ??= [];
  }
}

function admitted(what: 'limit' | 'server', name: string | undefined): boolean {
  const names = shared.names[what];
  if (name !== undefined && names.size < MAX_LIMIT_NAMES) names.add(name);
  if (name === undefined || names.has(name)) return true;
  reporter.warnOnce(
    `${what}-names`,
    `more than ${MAX_LIMIT_NAMES} distinct metered ${what} names in this process; "${name}" and any later new name ` +
      'work but are never exported (names are chosen in code and must stay few)',
  );
  return false;
}

function addTotals(into: AdmissionTotals, from: AdmissionTotals): void {
  into.timeouts += from.timeouts;
  into.cancelled += from.cancelled;
  into.rejected += from.rejected;
}

/** The eight instruments of one meter, the limits given that meter, and the global ones while it is the global meter. */
class ConcurrencyInstruments {
  readonly registry: Registry = new Map();
  /** The attribute sets and slots of the gauges it reported last: a set that is gone reports idle once. */
  private reported = new Map<string, [Attributes, number]>();

  constructor(meter: Meter) {
    const limit = createInstrument(meter, INSTRUMENTS.concurrencyLimit);
    const available = createInstrument(meter, INSTRUMENTS.concurrencyAvailable);
    const active = createInstrument(meter, INSTRUMENTS.concurrencyActive);
    const queueDepth = createInstrument(meter, INSTRUMENTS.concurrencyQueueDepth);
    const oldest = createInstrument(meter, INSTRUMENTS.concurrencyOldestWait);
    const timeouts = createInstrument(meter, INSTRUMENTS.admissionTimeouts);
    const cancelled = createInstrument(meter, INSTRUMENTS.admissionCancelled);
    const rejected = createInstrument(meter, INSTRUMENTS.admissionRejected);
    const gauges = [limit, available, active, queueDepth, oldest];
    meter.addBatchObservableCallback(
      (result) => {
        const observe = (attributes: Attributes, values: number[]) => {
          for (const [i, gauge] of gauges.entries()) result.observe(gauge, values[i] as number, attributes);
        };
        // A meter of a provider that is no longer the global one reports only the limits given it.
        const global = resolveMeter(undefined, SCOPE, reporter) === meter;
        const sets = new Map<string, Entry[]>();
        for (const registry of global ? [this.registry, shared.global] : [this.registry]) {
          for (const [key, entry] of registry) {
            entry.members = entry.members.filter((member) => member.deref() !== undefined); // collected
            if (entry.members.length > 0) sets.set(key, [...(sets.get(key) ?? []), entry]);
          }
        }
        const at = now();
        const reported = new Map<string, [Attributes, number]>();
        for (const [key, entries] of sets) {
          const { attributes } = entries[0] as Entry;
          const totals = { timeouts: 0, cancelled: 0, rejected: 0 };
          const limiters = new Set<Limiter>();
          for (const entry of entries) {
            addTotals(totals, entry.totals);
            for (const member of entry.members) limiters.add((member.deref() as Admission).limiter);
          }
          if (entries.some((entry) => entry.timed)) result.observe(timeouts, totals.timeouts, attributes);
          result.observe(cancelled, totals.cancelled, attributes);
          result.observe(rejected, totals.rejected, attributes);
          const bounded = [...limiters].filter((limiter) => Number.isFinite(slotsOf(limiter)));
          if (bounded.length === 0) continue;
          const sum = { slots: 0, free: 0, held: 0, waiting: 0, longest: 0 };
          for (const limiter of bounded) {
            sum.slots += slotsOf(limiter);
            sum.free += limiter.available();
            sum.held += limiter.active;
            sum.waiting += limiter.queued;
            const wait = at - (limiter.waits?.[0] ?? at);
            if (wait > sum.longest) sum.longest = wait;
          }
          observe(attributes, [sum.slots, sum.free, sum.held, sum.waiting, sum.longest]);
          reported.set(key, [attributes, sum.slots]);
        }
        // Gone since the last collection: its idle final state, once.
        for (const [key, [attributes, slots]] of this.reported) {
          if (!reported.has(key)) observe(attributes, [slots, slots, 0, 0, 0]);
        }
        this.reported = reported;
      },
      [...gauges, timeouts, cancelled, rejected],
    );
    shared.meters.set(meter, this);
  }
}
