// The sandbox lifecycle instruments, made from @gym/constants' table once per meter. Unlike
// the records these are metrics, but they follow Gym's rule for the `sandbox` span group: with
// the group off none is recorded, whatever meter was injected (a provider says where, the
// group says whether).

import { INSTRUMENTS } from '@gym/constants';
import { currentSpanGroups, isMetricsExporting } from '@gym/core';
import { createInstrument, type MeterSourceOptions, perMeter, resolveMeter } from '@gym/core/internal';
import type { Counter, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';
import { reporter, SCOPE } from './scope.js';

/** The five lifecycle instruments of one meter. */
export class SandboxLifecycleInstruments {
  readonly active: UpDownCounter;
  readonly startupDuration: Histogram;
  readonly execDuration: Histogram;
  readonly transferDuration: Histogram;
  readonly createRetries: Counter;

  constructor(meter: Meter) {
    this.active = createInstrument(meter, INSTRUMENTS.sandboxActive);
    this.startupDuration = createInstrument(meter, INSTRUMENTS.sandboxStartupDuration);
    this.execDuration = createInstrument(meter, INSTRUMENTS.sandboxExecDuration);
    this.transferDuration = createInstrument(meter, INSTRUMENTS.sandboxTransferDuration);
    this.createRetries = createInstrument(meter, INSTRUMENTS.sandboxCreateRetry);
  }
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
