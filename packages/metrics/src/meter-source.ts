// Where a recorder's meter comes from. An injected meter or provider wins (the caller said
// "record here"); otherwise the global provider, and only while metrics are exporting. The
// exporting check comes first and is one global read, so a process with telemetry off
// never asks the OpenTelemetry API for anything.

import { isMetricsExporting } from '@gym/core';
import { type Meter, type MeterProvider, metrics } from '@opentelemetry/api';
import type { MetricsOptions } from './types.js';

/** Instrumentation scope of every instrument this package creates. */
export const METER_NAME = '@gym/metrics';

/** One meter per provider: the hot path must not call `getMeter` on every record. */
const meterByProvider = new WeakMap<MeterProvider, Meter>();

/**
 * Whether a record with these options would reach a meter, without touching one: an
 * injected meter or provider, else `isMetricsExporting()`.
 */
export function wouldExport(options: MetricsOptions | undefined): boolean {
  if (options !== undefined && options !== null) {
    if (options.meter !== undefined || options.meterProvider !== undefined) return true;
  }
  return isMetricsExporting();
}

/**
 * The meter to record into, or `undefined` when metrics are not exporting. May throw (a
 * broken getter, provider or `WeakMap` key): callers catch.
 */
export function resolveMeter(options: MetricsOptions | undefined): Meter | undefined {
  if (options !== undefined && options !== null) {
    const meter = options.meter;
    if (meter !== undefined) return meter;
    const provider = options.meterProvider;
    if (provider !== undefined) return meterOf(provider);
  }
  if (!isMetricsExporting()) return undefined;
  return meterOf(metrics.getMeterProvider());
}

function meterOf(provider: MeterProvider): Meter {
  let meter = meterByProvider.get(provider);
  if (meter === undefined) {
    meter = provider.getMeter(METER_NAME);
    meterByProvider.set(provider, meter);
  }
  return meter;
}
