// The seven gym.concurrency.* instruments, and the registries of metered limits they report.
// Every instrument is observable: at collection the SDK reads each limit's own counts and, live
// from the limiter, its limit and free slots. One attribute set is one exported limit: a newer
// metered limit with the same names takes the older one's place (whose admission totals carry
// over, so a counter never goes backwards), and a closed limit leaves the export at once.

import { INSTRUMENTS } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { createInstrument, perMeter, resolveMeter } from '@gym/core/internal';
import type { Attributes, Meter } from '@opentelemetry/api';
import type { Admission } from './run.js';
import { reporter, SCOPE } from './scope.js';

/** What the instruments read of one metered limit. */
export interface ExportedLimit {
  /** Component, limit name and server name as one string. */
  readonly key: string;
  readonly attributes: Attributes;
  readonly admission: Admission;
  /** Slots now, read from the limiter (`Infinity`: unbounded, no point). */
  limitNow(): number;
  availableNow(): number;
}

/** One attribute set: its current limit, and the admission totals of the limits it replaced. */
interface LimitSet {
  current: ExportedLimit | undefined;
  timeouts: number;
  cancelled: number;
  rejected: number;
}

/** The metered limits reported on one meter (GLOBAL: on the global provider's meter). */
export class Registry {
  readonly sets = new Map<string, LimitSet>();

  add(limit: ExportedLimit): void {
    let set = this.sets.get(limit.key);
    if (set === undefined) {
      set = { current: undefined, timeouts: 0, cancelled: 0, rejected: 0 };
      this.sets.set(limit.key, set);
    }
    retire(set);
    set.current = limit;
  }

  remove(limit: ExportedLimit): void {
    const set = this.sets.get(limit.key);
    if (set?.current === limit) retire(set);
  }
}

function retire(set: LimitSet): void {
  const admission = set.current?.admission;
  set.current = undefined;
  if (admission === undefined) return;
  set.timeouts += admission.timeouts;
  set.cancelled += admission.cancelled;
  set.rejected += admission.rejected;
}

/** Limits that record through the global provider: reported only while metrics are exporting. */
export const GLOBAL = new Registry();

/** The registry of limits given `meter` (or a provider of it). */
export const registryOf = perMeter(() => new Registry());

const instrumentsOf = perMeter((meter) => new ConcurrencyInstruments(meter));

/** Reports `registry` on `meter` from now on. False when the instruments could not be made (reported once). */
export function attach(meter: Meter, registry: Registry): boolean {
  try {
    instrumentsOf(meter).registries.add(registry);
    return true;
  } catch (error) {
    reporter.warnOnce(
      'concurrency-instruments',
      'creating the gym.concurrency instruments failed; metered limits are not reported, the next use tries again',
      error,
    );
    return false;
  }
}

/** Reports GLOBAL on the global provider's meter; called while metrics export. */
export function attachGlobal(): void {
  const meter = resolveMeter(undefined, SCOPE, reporter);
  if (meter !== undefined) attach(meter, GLOBAL);
}

class ConcurrencyInstruments {
  readonly registries = new Set<Registry>();

  constructor(meter: Meter) {
    const limit = createInstrument(meter, INSTRUMENTS.concurrencyLimit);
    const active = createInstrument(meter, INSTRUMENTS.concurrencyActive);
    const available = createInstrument(meter, INSTRUMENTS.concurrencyAvailable);
    const queueDepth = createInstrument(meter, INSTRUMENTS.concurrencyQueueDepth);
    const timeouts = createInstrument(meter, INSTRUMENTS.admissionTimeouts);
    const cancelled = createInstrument(meter, INSTRUMENTS.admissionCancelled);
    const rejected = createInstrument(meter, INSTRUMENTS.admissionRejected);
    const all = [limit, active, available, queueDepth, timeouts, cancelled, rejected];
    meter.addBatchObservableCallback((result) => {
      try {
        for (const registry of this.registries) {
          if (registry === GLOBAL && !isMetricsExporting()) continue;
          for (const set of registry.sets.values()) {
            const current = set.current;
            if (current === undefined) continue;
            const { attributes, admission: a } = current;
            const slots = current.limitNow();
            if (Number.isFinite(slots)) {
              result.observe(limit, slots, attributes);
              result.observe(available, current.availableNow(), attributes);
            }
            result.observe(active, a.active, attributes);
            result.observe(queueDepth, a.queued, attributes);
            if (a.timeoutMs !== undefined) result.observe(timeouts, set.timeouts + a.timeouts, attributes);
            result.observe(cancelled, set.cancelled + a.cancelled, attributes);
            result.observe(rejected, set.rejected + a.rejected, attributes);
          }
        }
      } catch (error) {
        reporter.warnOnce('limit-read', 'reading a metered limit failed; its points are missing', error);
      }
    }, all);
  }
}
