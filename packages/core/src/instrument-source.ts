// Where a recorder's meter or tracer comes from, one rule for every package: an injected
// provider, else the global provider, and the global one only while exporting. `null` and
// `undefined` both mean "not injected". The exporting check
// is one global read, so a process with telemetry off never asks the OpenTelemetry API for
// anything. Resolution never throws: a provider whose `getMeter` throws is reported once and
// the call gets `undefined`; the next call tries again (nothing is cached as dead).

import { type Meter, type MeterProvider, metrics, type Tracer, type TracerProvider, trace } from '@opentelemetry/api';
import type { Reporter } from './report.js';
import { isMetricsExporting, isTracesExporting } from './telemetry-state.js';

/** Where to record metrics. Absent (or `null`): the global provider, while exporting. */
export interface MeterSourceOptions {
  /** Record on a meter of this provider. */
  readonly meterProvider?: MeterProvider | null | undefined;
}

/** Where to record spans. Absent (or `null`): the global provider, while exporting. */
export interface TracerSourceOptions {
  /** Record on a tracer of this provider. */
  readonly tracerProvider?: TracerProvider | null | undefined;
}

/** The instrumentation scope a package records under. */
export interface InstrumentScope {
  readonly name: string;
  readonly version?: string;
}

/** Per provider, per scope name: what `getMeter`/`getTracer` returned. */
const made = new WeakMap<object, Map<string, Meter | Tracer>>();

/** The last answer, so a process that records on one provider under one scope skips both maps. */
let last: { provider: object; scope: InstrumentScope; value: Meter | Tracer } | undefined;

function fromProvider<T extends Meter | Tracer>(provider: object, scope: InstrumentScope, get: () => T): T {
  if (last !== undefined && last.provider === provider && last.scope === scope) return last.value as T;
  let byScope = made.get(provider);
  let value = byScope?.get(scope.name) as T | undefined;
  if (value !== undefined) {
    last = { provider, scope, value };
    return value;
  }
  value = get();
  if (typeof value !== 'object' || value === null) throw new TypeError('the provider returned no meter or tracer');
  if (byScope === undefined) {
    byScope = new Map();
    made.set(provider, byScope);
  }
  byScope.set(scope.name, value);
  last = { provider, scope, value };
  return value;
}

/**
 * The meter to record on, or `undefined` (not exporting, or resolution failed: reported once
 * through `reporter` under kind `meter`, retried on the next call). Never throws.
 */
export function resolveMeter(
  options: MeterSourceOptions | null | undefined,
  scope: InstrumentScope,
  reporter: Reporter,
): Meter | undefined {
  try {
    const provider = options?.meterProvider ?? (isMetricsExporting() ? metrics.getMeterProvider() : undefined);
    return provider && fromProvider(provider, scope, () => provider.getMeter(scope.name, scope.version));
  } catch (error) {
    reporter.warnOnce(
      'meter',
      'getting a meter failed; nothing was recorded this time, the next call tries again',
      error,
    );
    return undefined;
  }
}

/**
 * The tracer to record on, or `undefined` (not exporting, or resolution failed: reported once
 * under kind `tracer`, retried on the next call). Never throws.
 */
export function resolveTracer(
  options: TracerSourceOptions | null | undefined,
  scope: InstrumentScope,
  reporter: Reporter,
): Tracer | undefined {
  try {
    const provider = options?.tracerProvider ?? (isTracesExporting() ? trace.getTracerProvider() : undefined);
    return provider && fromProvider(provider, scope, () => provider.getTracer(scope.name, scope.version));
  } catch (error) {
    reporter.warnOnce(
      'tracer',
      'getting a tracer failed; nothing was recorded this time, the next call tries again',
      error,
    );
    return undefined;
  }
}
