// The sandbox lifecycle instruments, made from @gym/constants' table once per meter. Unlike
// the records these are metrics, but they follow Gym's rule for the `sandbox` span group: with
// the group off none is recorded, whatever meter was injected (a provider says where, the
// group says whether).

import { SANDBOX_LIFECYCLE_INSTRUMENTS as TABLE } from '@gym/constants';
import { currentSpanGroups, isMetricsExporting, type MeterSourceOptions, perMeter, resolveMeter } from '@gym/core';
import { type Counter, type Histogram, type Meter, type UpDownCounter, ValueType } from '@opentelemetry/api';
import { reporter, SCOPE } from './scope.js';

type HistogramEntry = (typeof TABLE)['execDuration' | 'startupDuration' | 'transferDuration'];

/** The five lifecycle instruments of one meter. */
export class SandboxLifecycleInstruments {
  readonly active: UpDownCounter;
  readonly startupDuration: Histogram;
  readonly execDuration: Histogram;
  readonly transferDuration: Histogram;
  readonly createRetries: Counter;

  constructor(meter: Meter) {
    const { active, createRetries } = TABLE;
    this.active = meter.createUpDownCounter(active.name, {
      description: active.description,
      unit: active.unit,
      valueType: ValueType.INT,
    });
    this.startupDuration = histogram(meter, TABLE.startupDuration);
    this.execDuration = histogram(meter, TABLE.execDuration);
    this.transferDuration = histogram(meter, TABLE.transferDuration);
    this.createRetries = meter.createCounter(createRetries.name, {
      description: createRetries.description,
      unit: createRetries.unit,
      valueType: ValueType.INT,
    });
  }
}

function histogram(meter: Meter, entry: HistogramEntry): Histogram {
  return meter.createHistogram(entry.name, {
    description: entry.description,
    unit: entry.unit,
    advice: { explicitBucketBoundaries: [...entry.boundaries] },
  });
}

const instrumentsOf = perMeter((meter) => new SandboxLifecycleInstruments(meter));

/**
 * The instruments to record on now, or `undefined`: nothing injected and metrics not
 * exporting, or the `sandbox` span group off. Off, it costs one read of the shared state.
 * May throw (a meter that fails); the public edges catch it.
 */
export function lifecycleInstruments(source: MeterSourceOptions | undefined): SandboxLifecycleInstruments | undefined {
  if ((source === undefined && !isMetricsExporting()) || !currentSpanGroups().has('sandbox')) return undefined;
  const meter = resolveMeter(source, SCOPE, reporter);
  return meter === undefined ? undefined : instrumentsOf(meter);
}

/** Reports, once per process, that recording a lifecycle metric failed; the value was dropped. */
export function reportMetricFailure(error: unknown): void {
  reporter.warnOnce(
    'lifecycle-metric',
    'recording a sandbox lifecycle metric failed; the value was dropped (the next call tries again)',
    error,
  );
}
