// Gym's event-loop lag: how late a timer asked to wake after a fixed interval woke, clamped at 0.
// A setTimeout chain, like Gym's `asyncio.sleep` loop: each sample is measured from when its timer
// was armed, so one long block yields one large sample, not a burst of catch-up ticks.

import type { Histogram } from '@opentelemetry/api';
import { NO_ATTRIBUTES, reporter } from './scope.js';

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
