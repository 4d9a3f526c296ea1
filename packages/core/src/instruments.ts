// Where a package's instruments come from: a meter or tracer of an injected provider, else of the
// global one while exporting, and each instrument from its INSTRUMENTS entry. Nothing failing is cached.

import type { InstrumentEntry, InstrumentKind } from '@gym/constants';
import type * as api from '@opentelemetry/api';
import { metrics, trace, ValueType } from '@opentelemetry/api';
import type { Reporter } from './report.js';
import { isMetricsExporting, isTracesExporting } from './telemetry-state.js';

/** Where to record metrics. Absent (or `null`): the global provider, while exporting. */
export type MeterSourceOptions = { readonly meterProvider?: api.MeterProvider | null | undefined };

/** Where to record spans. Absent (or `null`): the global provider, while exporting. */
export type TracerSourceOptions = { readonly tracerProvider?: api.TracerProvider | null | undefined };

/** The instrumentation scope a package records under. */
export type InstrumentScope = { readonly name: string; readonly version?: string };

// The last answer per provider: the hot path is a lookup and a compare, where the SDK's getMeter
// builds a key string per call. Weak: a provider the user dropped, and its meter, are not kept.
const lastOf = new WeakMap<object, { kind: string; scope: InstrumentScope; value: api.Meter | api.Tracer }>();

function fromProvider<P extends object, T extends api.Meter | api.Tracer>(
  kind: 'meter' | 'tracer',
  provider: P,
  get: (this: P, name: string, version?: string) => T,
  scope: InstrumentScope,
  reporter: Reporter,
): T | undefined {
  const last = lastOf.get(provider);
  if (last?.scope === scope && last.kind === kind) return last.value as T;
  try {
    const value = get.call(provider, scope.name, scope.version);
    lastOf.set(provider, { kind, scope, value });
    return value;
  } catch (error) {
    reporter.warnOnce(kind, `getting a ${kind} failed; nothing was recorded, the next call tries again`, error);
    return undefined;
  }
}

/** The provider to record metrics on: the injected one, else the global one while `exporting` (read now when not given). */
export function meterProviderOf(
  options: MeterSourceOptions | null | undefined,
  exporting?: boolean,
): api.MeterProvider | undefined {
  return options?.meterProvider ?? ((exporting ?? isMetricsExporting()) ? metrics.getMeterProvider() : undefined);
}

/** The meter to record on, or `undefined` (not exporting, or it failed: reported once). Never throws. */
export function resolveMeter(
  options: MeterSourceOptions | null | undefined,
  scope: InstrumentScope,
  reporter: Reporter,
): api.Meter | undefined {
  const provider = meterProviderOf(options);
  return provider && fromProvider('meter', provider, provider.getMeter, scope, reporter);
}

/** The tracer to record on, or `undefined` (not exporting, or it failed: reported once). Never throws. */
export function resolveTracer(
  options: TracerSourceOptions | null | undefined,
  scope: InstrumentScope,
  reporter: Reporter,
): api.Tracer | undefined {
  const provider = options?.tracerProvider ?? (isTracesExporting() ? trace.getTracerProvider() : undefined);
  return provider && fromProvider('tracer', provider, provider.getTracer, scope, reporter);
}

// Each kind's factory on the meter: one table, from which the type each kind creates derives.
const CREATE = {
  histogram: 'createHistogram',
  counter: 'createCounter',
  'up-down counter': 'createUpDownCounter',
  gauge: 'createGauge',
  'observable counter': 'createObservableCounter',
  'observable up-down counter': 'createObservableUpDownCounter',
  'observable gauge': 'createObservableGauge',
} as const satisfies Record<InstrumentKind, keyof api.Meter>;

/** The OpenTelemetry API type each kind creates. */
export type InstrumentOfKind = { [K in InstrumentKind]: ReturnType<api.Meter[(typeof CREATE)[K]]> };

/** Creates `entry`'s instrument on `meter`, a histogram advising its boundaries (a user's view wins). Throws as the meter does. */
export function createInstrument<E extends InstrumentEntry>(meter: api.Meter, entry: E): InstrumentOfKind[E['kind']] {
  const create = meter[CREATE[entry.kind]] as (name: string, options: api.MetricOptions) => InstrumentOfKind[E['kind']];
  return create.call(meter, entry.name, {
    description: entry.description,
    unit: entry.unit,
    valueType: entry.valueType === 'int' ? ValueType.INT : ValueType.DOUBLE,
    // A copy: the API types the advice as mutable, the table's lists are `as const`.
    advice: entry.boundaries && { explicitBucketBoundaries: [...entry.boundaries] },
  });
}

/** A per-meter memo of `create`. When `create` throws, nothing is kept and the error reaches the caller. */
export function perMeter<T>(create: (meter: api.Meter) => T): (meter: api.Meter) => T {
  const made = new WeakMap<api.Meter, T>();
  return (meter) => made.get(meter) ?? (made.set(meter, create(meter)).get(meter) as T);
}
