// Where a recorder's meter or tracer comes from, one rule for every package: an injected
// meter/tracer wins, then an injected provider, then the global provider, and the global one
// only while exporting. `null` and `undefined` both mean "not injected". The exporting check
// is one global read, so a process with telemetry off never asks the OpenTelemetry API for
// anything.
//
// Only own properties of the options count (a polluted `Object.prototype` injects nothing).
// Resolution never throws. A getter, provider or `getMeter` that throws is reported once and
// the call gets `undefined` (it records nothing); the next call tries again, so a provider
// that recovers, or the next provider, is used. Nothing is cached as dead.

import { type Meter, type MeterProvider, metrics, type Tracer, type TracerProvider, trace } from '@opentelemetry/api';
import type { Reporter } from './report.js';
import { isMetricsExporting, isTracesExporting } from './telemetry-state.js';

/** Where to record metrics. Both absent (or `null`): the global provider, while exporting. */
export interface MeterSourceOptions {
  /** Record on this meter. */
  readonly meter?: Meter | null | undefined;
  /** Record on a meter of this provider (ignored when `meter` is given). */
  readonly meterProvider?: MeterProvider | null | undefined;
}

/** Where to record spans. Both absent (or `null`): the global provider, while exporting. */
export interface TracerSourceOptions {
  /** Record on this tracer. */
  readonly tracer?: Tracer | null | undefined;
  /** Record on a tracer of this provider (ignored when `tracer` is given). */
  readonly tracerProvider?: TracerProvider | null | undefined;
}

/** The instrumentation scope a package records under. */
export interface InstrumentScope {
  readonly name: string;
  readonly version?: string;
}

const meters = new WeakMap<object, Map<string, Meter>>();
const tracers = new WeakMap<object, Map<string, Tracer>>();

function isObject(value: unknown): value is object {
  return (typeof value === 'object' || typeof value === 'function') && value !== null;
}

/**
 * Own property `key` of `options`, else `undefined`: a polluted `Object.prototype` (say
 * `Object.prototype.meter = …`) must not inject anything. May throw through a throwing getter
 * or Proxy trap.
 */
function own(options: object, key: string): unknown {
  return Object.hasOwn(options, key) ? (options as Record<string, unknown>)[key] : undefined;
}

function injected(options: unknown, ownKey: string, provider: string): boolean {
  if (!isObject(options)) return false;
  return isObject(own(options, ownKey)) || isObject(own(options, provider));
}

/**
 * Whether a record with these options would reach a meter, without touching one: a meter or
 * provider was injected, else `isMetricsExporting()`. May throw only through a throwing getter
 * on `options`; callers on a hot path call it inside their own guard.
 */
export function wouldRecordMetrics(options: MeterSourceOptions | null | undefined): boolean {
  return injected(options, 'meter', 'meterProvider') || isMetricsExporting();
}

/** Like {@link wouldRecordMetrics}, for spans. */
export function wouldRecordTraces(options: TracerSourceOptions | null | undefined): boolean {
  return injected(options, 'tracer', 'tracerProvider') || isTracesExporting();
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
    if (isObject(options)) {
      const meter = own(options, 'meter');
      if (isObject(meter)) return meter as Meter;
      const provider = own(options, 'meterProvider');
      if (isObject(provider)) return meterOf(provider as MeterProvider, scope);
    }
    if (!isMetricsExporting()) return undefined;
    return meterOf(metrics.getMeterProvider(), scope);
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
    if (isObject(options)) {
      const tracer = own(options, 'tracer');
      if (isObject(tracer)) return tracer as Tracer;
      const provider = own(options, 'tracerProvider');
      if (isObject(provider)) return tracerOf(provider as TracerProvider, scope);
    }
    if (!isTracesExporting()) return undefined;
    return tracerOf(trace.getTracerProvider(), scope);
  } catch (error) {
    reporter.warnOnce(
      'tracer',
      'getting a tracer failed; nothing was recorded this time, the next call tries again',
      error,
    );
    return undefined;
  }
}

function meterOf(provider: MeterProvider, scope: InstrumentScope): Meter {
  let byScope = meters.get(provider);
  let meter = byScope?.get(scope.name);
  if (meter !== undefined) return meter;
  meter = provider.getMeter(scope.name, scope.version);
  if (!isObject(meter)) throw new TypeError('getMeter() returned no meter');
  if (byScope === undefined) {
    byScope = new Map();
    meters.set(provider, byScope);
  }
  byScope.set(scope.name, meter);
  return meter;
}

function tracerOf(provider: TracerProvider, scope: InstrumentScope): Tracer {
  let byScope = tracers.get(provider);
  let tracer = byScope?.get(scope.name);
  if (tracer !== undefined) return tracer;
  tracer = provider.getTracer(scope.name, scope.version);
  if (!isObject(tracer)) throw new TypeError('getTracer() returned no tracer');
  if (byScope === undefined) {
    byScope = new Map();
    tracers.set(provider, byScope);
  }
  byScope.set(scope.name, tracer);
  return tracer;
}
