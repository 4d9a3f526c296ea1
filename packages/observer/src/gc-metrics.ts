// V8 garbage-collection pauses under OpenTelemetry's `v8js.gc.duration`, Node's counterpart of
// Gym's gc metrics. A small PerformanceObserver on 'gc' entries rather than
// @opentelemetry/instrumentation-runtime-node: its versions that run on Node 20 pin
// @opentelemetry/instrumentation to one 0.2xx line (a second copy under any other SDK), switch
// on six collectors at once (event-loop delay and utilization, heap spaces, active handles)
// and use their own buckets, not the advised ones kept in @gym/constants.
//
// Cost: V8 already measures every pause; the observer is called once per batch of entries
// (Node buffers them), and each entry is one histogram record with a prebuilt attribute set.

import { constants, PerformanceObserver } from 'node:perf_hooks';
import { ATTR_V8JS_GC_TYPE, INSTRUMENTS, type V8jsGcType } from '@gym/constants';
import { createInstrument } from '@gym/core/internal';
import type { Attributes, Histogram, Meter } from '@opentelemetry/api';
import { reporter } from './scope.js';

const attributesOf = (type: V8jsGcType): Attributes => Object.freeze({ [ATTR_V8JS_GC_TYPE]: type });

/** Node's gc kind flag → prebuilt attributes. Kinds outside the four are not recorded (bounded values). */
const BY_KIND: ReadonlyMap<number, Attributes> = new Map([
  [constants.NODE_PERFORMANCE_GC_MAJOR, attributesOf('major')],
  [constants.NODE_PERFORMANCE_GC_MINOR, attributesOf('minor')],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, attributesOf('incremental')],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, attributesOf('weakcb')],
]);

/** Creates `v8js.gc.duration` on `meter`. May throw (a broken meter): callers catch. */
export function createGcHistogram(meter: Meter): Histogram {
  return createInstrument(meter, INSTRUMENTS.gcDuration);
}

/** A connected gc observer; `stop()` disconnects it (idempotent, never throws). */
export interface GcMetrics {
  stop(): void;
}

/** Starts observing gc entries into `histogram`. May throw (no perf_hooks gc support): the caller catches. */
export function startGcMetrics(histogram: Histogram): GcMetrics {
  let stopped = false;
  const observer = new PerformanceObserver((list) => {
    if (stopped) return;
    try {
      for (const entry of list.getEntries()) {
        const kind = (entry as { detail?: { kind?: unknown } | null }).detail?.kind;
        const attributes = typeof kind === 'number' ? BY_KIND.get(kind) : undefined;
        if (attributes !== undefined) histogram.record(entry.duration / 1000, attributes);
        if (stopped) return;
      }
    } catch (error) {
      reporter.warnOnce(
        'gc-record',
        'recording a garbage-collection pause failed; later pauses are still tried',
        error,
      );
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      observer.disconnect();
    },
  };
}
