// One way to create an instrument: from its entry in @gym/constants' INSTRUMENTS table, so no
// package restates a kind, unit, description, value type or bucket list. Histograms get their
// boundaries as advice (a view the user sets up still wins).

import type { InstrumentEntry, InstrumentKind } from '@gym/constants';
import {
  type Counter,
  type Gauge,
  type Histogram,
  type Meter,
  type MetricOptions,
  type ObservableCounter,
  type ObservableGauge,
  type ObservableUpDownCounter,
  type UpDownCounter,
  ValueType,
} from '@opentelemetry/api';

/** The OpenTelemetry API type each kind creates. */
export interface InstrumentOfKind {
  histogram: Histogram;
  counter: Counter;
  'up-down counter': UpDownCounter;
  gauge: Gauge;
  'observable counter': ObservableCounter;
  'observable up-down counter': ObservableUpDownCounter;
  'observable gauge': ObservableGauge;
}

/**
 * Creates `entry`'s instrument on `meter`, with the entry's unit, description, value type and
 * (for a histogram) its `explicitBucketBoundaries` advice. Throws when the meter does; callers
 * that create instruments lazily catch and report it.
 */
export function createInstrument<E extends InstrumentEntry>(meter: Meter, entry: E): InstrumentOfKind[E['kind']];
export function createInstrument(meter: Meter, entry: InstrumentEntry): InstrumentOfKind[InstrumentKind] {
  const options: MetricOptions = {
    description: entry.description,
    unit: entry.unit,
    valueType: entry.valueType === 'int' ? ValueType.INT : ValueType.DOUBLE,
  };
  switch (entry.kind) {
    case 'histogram':
      // A copy: the API types the advice as a mutable array, the table's lists are `as const`.
      return meter.createHistogram(entry.name, {
        ...options,
        advice: { explicitBucketBoundaries: [...entry.boundaries] },
      });
    case 'counter':
      return meter.createCounter(entry.name, options);
    case 'up-down counter':
      return meter.createUpDownCounter(entry.name, options);
    case 'gauge':
      return meter.createGauge(entry.name, options);
    case 'observable counter':
      return meter.createObservableCounter(entry.name, options);
    case 'observable up-down counter':
      return meter.createObservableUpDownCounter(entry.name, options);
    case 'observable gauge':
      return meter.createObservableGauge(entry.name, options);
  }
}
