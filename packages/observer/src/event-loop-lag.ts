// Gym's event-loop lag: how late a timer that asked to wake after a fixed interval actually
// woke, clamped at 0 (Node rounds its own loop time, so a timer can look a fraction of a
// millisecond early). A setTimeout chain rather than setInterval: each sample is measured from
// the moment its timer was armed, like Gym's `await asyncio.sleep(interval)` loop, so one long
// block yields one large sample instead of a burst of catch-up ticks. Node's
// `monitorEventLoopDelay` measures another quantity (the delay between loop iterations, as
// percentiles) and cannot feed Gym's buckets sample by sample.

import type { Attributes, Histogram } from '@opentelemetry/api';
import { reporter } from './scope.js';

const NO_ATTRIBUTES: Attributes = Object.freeze({});

/** Records one lag sample per `intervalMs` into `histogram`; returns what stops it (idempotent). */
export function startLagSampler(
  histogram: Histogram,
  intervalMs: number,
  clock: () => number = () => performance.now(),
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let intended = 0;
  const arm = (): void => {
    intended = clock() + intervalMs;
    timer = setTimeout(tick, intervalMs).unref();
  };
  const tick = (): void => {
    try {
      histogram.record(Math.max(clock() - intended, 0), NO_ATTRIBUTES);
    } catch (error) {
      reporter.warnOnce('lag-record', 'recording event-loop lag failed; the next interval tries again', error);
    }
    // A record that stopped the sampler (an observer stopped from a reader) left no timer.
    if (timer !== undefined) arm();
  };
  arm();
  return () => {
    clearTimeout(timer);
    timer = undefined;
  };
}
