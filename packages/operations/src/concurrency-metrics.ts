// The seven gym.concurrency.* instruments, and the registry of metered limits they report.
//
// Every instrument is observable: a metered limit keeps plain integers whether or not telemetry
// is on, and the SDK reads them at collection. The registry lives in @gym/core's versioned
// global, per meter, so every copy of this package in the process reports every metered limit
// of every copy (the SDK keeps the last observation of an attribute set, and every copy's
// observation is the same whole sum). Limits with the same attribute set are summed.
//
// A registry entry holds the limit itself only weakly: a limit that is no longer referenced
// (say, one made per request by mistake) stops being reported, at the next collection after it
// was collected (WeakRef), and its entry is dropped even when nobody collects
// (FinalizationRegistry). Its counters are folded into its attribute set's totals while other
// limits of that set live, so a counter never goes backwards; when the last one goes, the set
// stops being reported.

import {
  METRIC_CONCURRENCY_ACTIVE,
  METRIC_CONCURRENCY_ADMISSION_CANCELLED,
  METRIC_CONCURRENCY_ADMISSION_REJECTED,
  METRIC_CONCURRENCY_ADMISSION_TIMEOUTS,
  METRIC_CONCURRENCY_AVAILABLE,
  METRIC_CONCURRENCY_LIMIT,
  METRIC_CONCURRENCY_QUEUE_DEPTH,
  UNIT_SLOT,
  UNIT_WAIT,
  UNIT_WAITER,
} from '@gym/constants';
import { isMetricsExporting, perMeter, sharedSlot } from '@gym/core';
import {
  type Attributes,
  type BatchObservableResult,
  type Meter,
  type Observable,
  type ObservableCounter,
  type ObservableGauge,
  ValueType,
} from '@opentelemetry/api';
import { reporter } from './report.js';

/**
 * The numbers of one metered limit, shared with every copy of this package (shape version 1:
 * only ever extended). Holds nothing that keeps the limit itself alive.
 */
export interface LimitCell {
  /** Attributes of its points, frozen. */
  readonly attributes: Attributes;
  /** The attribute set as one string: limits with the same key are summed. */
  readonly key: string;
  /** It has an admission deadline (only then does `admission_timeouts_total` have a point). */
  readonly hasDeadline: boolean;
  /** Slots of the limit now (read live for p-limit). Never throws. */
  readonly capacity: () => number;
  /** Slots held now, read live from the limit (p-limit); when absent, `active` counts. Never throws. */
  readonly activeNow?: (() => number) | undefined;
  /** Callers waiting now, read live from the limit (p-limit); when absent, `queued` counts. Never throws. */
  readonly queuedNow?: (() => number) | undefined;
  active: number;
  queued: number;
  timeouts: number;
  cancelled: number;
  rejected: number;
}

/** One metered limit registered on one meter. */
interface Entry {
  readonly owner: WeakRef<object>;
  readonly cell: LimitCell;
  /** Registered through the global provider: reported only while metrics are exporting. */
  readonly viaGlobal: boolean;
}

/** Counters of limits that are gone, per attribute set, kept while others of the set live. */
interface Retired {
  timeouts: number;
  cancelled: number;
  rejected: number;
}

/** The metered limits of one meter. */
interface MeterLimits {
  readonly entries: Set<Entry>;
  readonly retired: Map<string, Retired>;
}

/** Process-wide: limits per meter, and the limit names admitted so far. */
interface Registry {
  readonly byMeter: WeakMap<Meter, MeterLimits>;
  readonly names: Set<string>;
}

const registry = sharedSlot<Registry>('@gym/operations/metered-limits@1', () => ({
  byMeter: new WeakMap(),
  names: new Set(),
}));

/** Limit names admitted in this process (every copy of the package counts against one bound). */
export const admittedNames: Set<string> = registry.names;

function limitsOf(meter: Meter): MeterLimits {
  let limits = registry.byMeter.get(meter);
  if (limits === undefined) {
    limits = { entries: new Set(), retired: new Map() };
    registry.byMeter.set(meter, limits);
  }
  return limits;
}

/** Folds a gone limit's counters into its set's totals and drops its entry. */
function retire(limits: MeterLimits, entry: Entry): void {
  if (!limits.entries.delete(entry)) return;
  const { cell } = entry;
  let retired = limits.retired.get(cell.key);
  if (retired === undefined) {
    retired = { timeouts: 0, cancelled: 0, rejected: 0 };
    limits.retired.set(cell.key, retired);
  }
  retired.timeouts += cell.timeouts;
  retired.cancelled += cell.cancelled;
  retired.rejected += cell.rejected;
}

const finalizer = new FinalizationRegistry<{ limits: MeterLimits; entry: Entry }>(({ limits, entry }) => {
  retire(limits, entry);
  for (const other of limits.entries) if (other.cell.key === entry.cell.key) return;
  limits.retired.delete(entry.cell.key);
});

/** The instruments of one meter, made by this copy. */
class ConcurrencyInstruments {
  private readonly limit: ObservableGauge;
  private readonly active: ObservableGauge;
  private readonly available: ObservableGauge;
  private readonly queueDepth: ObservableGauge;
  private readonly timeouts: ObservableCounter;
  private readonly cancelled: ObservableCounter;
  private readonly rejected: ObservableCounter;

  constructor(
    meter: Meter,
    private readonly limits: MeterLimits,
  ) {
    const gauge = (name: string, description: string, unit: string) =>
      meter.createObservableGauge(name, { description, unit, valueType: ValueType.INT });
    const counter = (name: string, description: string) =>
      meter.createObservableCounter(name, { description, unit: UNIT_WAIT, valueType: ValueType.INT });
    this.limit = gauge(METRIC_CONCURRENCY_LIMIT, 'Slots of the limit.', UNIT_SLOT);
    this.active = gauge(METRIC_CONCURRENCY_ACTIVE, 'Slots held now.', UNIT_SLOT);
    this.available = gauge(METRIC_CONCURRENCY_AVAILABLE, 'Slots free now (limit - active, never negative).', UNIT_SLOT);
    this.queueDepth = gauge(METRIC_CONCURRENCY_QUEUE_DEPTH, 'Callers waiting for a slot now.', UNIT_WAITER);
    this.timeouts = counter(METRIC_CONCURRENCY_ADMISSION_TIMEOUTS, 'Waits that ran out of admission time.');
    this.cancelled = counter(METRIC_CONCURRENCY_ADMISSION_CANCELLED, 'Waits ended by the caller (aborted).');
    this.rejected = counter(METRIC_CONCURRENCY_ADMISSION_REJECTED, 'Calls refused at once: the queue was full.');
    const observables: Observable[] = [
      this.limit,
      this.active,
      this.available,
      this.queueDepth,
      this.timeouts,
      this.cancelled,
      this.rejected,
    ];
    meter.addBatchObservableCallback(this.observe, observables);
  }

  private readonly observe = (result: BatchObservableResult): void => {
    const limits = this.limits;
    const exporting = isMetricsExporting();
    const sums = new Map<string, Sum>();
    for (const entry of limits.entries) {
      if (entry.owner.deref() === undefined) {
        retire(limits, entry);
        continue;
      }
      const { cell } = entry;
      let sum = sums.get(cell.key);
      if (sum === undefined) {
        sum = newSum(cell.attributes);
        sums.set(cell.key, sum);
      }
      if (entry.viaGlobal && !exporting) continue;
      sum.reported = true;
      const capacity = cell.capacity();
      const active = cell.activeNow === undefined ? cell.active : cell.activeNow();
      sum.limit += capacity;
      sum.active += active;
      sum.available += Math.max(0, capacity - active);
      sum.queued += cell.queuedNow === undefined ? cell.queued : cell.queuedNow();
      sum.timeouts += cell.timeouts;
      sum.cancelled += cell.cancelled;
      sum.rejected += cell.rejected;
      if (cell.hasDeadline) sum.hasDeadline = true;
    }
    for (const key of limits.retired.keys()) if (!sums.has(key)) limits.retired.delete(key);
    for (const [key, sum] of sums) {
      if (!sum.reported) continue;
      const retired = limits.retired.get(key);
      const attributes = sum.attributes;
      result.observe(this.limit, sum.limit, attributes);
      result.observe(this.active, sum.active, attributes);
      result.observe(this.available, sum.available, attributes);
      result.observe(this.queueDepth, sum.queued, attributes);
      if (sum.hasDeadline) result.observe(this.timeouts, sum.timeouts + (retired?.timeouts ?? 0), attributes);
      result.observe(this.cancelled, sum.cancelled + (retired?.cancelled ?? 0), attributes);
      result.observe(this.rejected, sum.rejected + (retired?.rejected ?? 0), attributes);
    }
  };
}

interface Sum {
  readonly attributes: Attributes;
  reported: boolean;
  hasDeadline: boolean;
  limit: number;
  active: number;
  available: number;
  queued: number;
  timeouts: number;
  cancelled: number;
  rejected: number;
}

function newSum(attributes: Attributes): Sum {
  return {
    attributes,
    reported: false,
    hasDeadline: false,
    limit: 0,
    active: 0,
    available: 0,
    queued: 0,
    timeouts: 0,
    cancelled: 0,
    rejected: 0,
  };
}

const instrumentsOf = perMeter((meter) => new ConcurrencyInstruments(meter, limitsOf(meter)));

/**
 * Reports `cell` (of the limit `owner`) on `meter` from now on, for as long as `owner` lives.
 * Returns false when the instruments could not be made (reported once; the caller tries again
 * later). Never throws.
 */
export function reportOn(meter: Meter, owner: object, cell: LimitCell, viaGlobal: boolean): boolean {
  const limits = limitsOf(meter);
  try {
    instrumentsOf(meter);
  } catch (error) {
    reporter.warnOnce(
      'concurrency-instruments',
      'creating the gym.concurrency instruments failed; metered limits are not reported, the next use tries again',
      error,
    );
    return false;
  }
  const entry: Entry = { owner: new WeakRef(owner), cell, viaGlobal };
  limits.entries.add(entry);
  finalizer.register(owner, { limits, entry });
  return true;
}
