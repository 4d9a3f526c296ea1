// V8 garbage-collection pauses as OpenTelemetry's `v8js.gc.duration`, from a PerformanceObserver
// on 'gc' entries (why not @opentelemetry/instrumentation-runtime-node: docs/observer.md).

import { constants, type NodeGCPerformanceDetail, PerformanceObserver } from 'node:perf_hooks';
import { ATTR_V8JS_GC_TYPE, INSTRUMENTS, type V8jsGcType } from '@gym/constants';
import { createInstrument } from '@gym/core/internal';
import type { Attributes, Meter } from '@opentelemetry/api';
import { reporter } from './scope.js';

const attributesOf = (type: V8jsGcType): Attributes => Object.freeze({ [ATTR_V8JS_GC_TYPE]: type });

/** Node's gc kind flag → prebuilt attributes. Other kinds are not recorded (bounded values). */
const BY_KIND: ReadonlyMap<number, Attributes> = new Map([
  [constants.NODE_PERFORMANCE_GC_MAJOR, attributesOf('major')],
  [constants.NODE_PERFORMANCE_GC_MINOR, attributesOf('minor')],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, attributesOf('incremental')],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, attributesOf('weakcb')],
]);

/** Records every gc pause into `v8js.gc.duration` of `meter`; returns what disconnects it. May throw: the caller catches. */
export function startGcMetrics(meter: Meter): () => void {
  const histogram = createInstrument(meter, INSTRUMENTS.gcDuration);
  let stopped = false;
  const observer = new PerformanceObserver((list) => {
    if (stopped) return; // Node delivers entries in a later turn: none after stop.
    try {
      for (const entry of list.getEntries()) {
        const attributes = BY_KIND.get((entry as unknown as { detail: NodeGCPerformanceDetail }).detail.kind);
        if (attributes !== undefined) histogram.record(entry.duration / 1000, attributes);
      }
    } catch (error) {
      reporter.warnOnce('gc-record', 'recording a garbage-collection pause failed; later pauses are tried', error);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    stopped = true;
    observer.disconnect();
  };
}
