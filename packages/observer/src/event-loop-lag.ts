// Gym's event-loop lag: a timer asks to wake after a fixed interval; how late it actually
// wakes is the lag. One sample per interval, clamped at 0 (a timer can fire a fraction of a
// millisecond "early" by the high-resolution clock, because Node rounds its own loop time).
// A setTimeout chain rather than setInterval: each sample is measured from the moment the
// timer was armed, exactly like Gym's `await asyncio.sleep(interval)` loop, so one long block
// yields one large sample instead of a burst of catch-up ticks. The timer is unref'd: the
// observer never keeps a process alive.
//
// Node's own `monitorEventLoopDelay` was considered: it samples with a libuv timer of its own
// and reports percentiles of a different quantity (delay between consecutive loop
// iterations), which is not Gym's definition and cannot feed Gym's buckets sample by sample.

import { INSTRUMENTS } from '@gym/constants';
import { createInstrument } from '@gym/core/internal';
import type { Attributes, Histogram, Meter } from '@opentelemetry/api';
import { reporter } from './scope.js';

/** A monotonic clock in milliseconds. */
export type Clock = () => number;

const NO_ATTRIBUTES: Attributes = Object.freeze({});

/** Creates `gym.event_loop.lag_ms` on `meter`. May throw (a broken meter): callers catch. */
export function createLagHistogram(meter: Meter): Histogram {
  return createInstrument(meter, INSTRUMENTS.eventLoopLag);
}

/** One sample per interval into a histogram, until stopped. */
export class EventLoopLagSampler {
  private timer: NodeJS.Timeout | undefined;
  private intended = 0;
  private stopped = false;
  private readonly tick = (): void => this.onTick();

  constructor(
    private readonly histogram: Histogram,
    private readonly intervalMs: number,
    private readonly clock: Clock,
  ) {}

  /** Arms the first timer. Never throws. */
  start(): void {
    if (this.stopped || this.timer !== undefined) return;
    this.arm();
  }

  /** Clears the timer; idempotent, also from inside a record. Never throws. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private onTick(): void {
    this.timer = undefined;
    try {
      this.histogram.record(Math.max(this.clock() - this.intended, 0), NO_ATTRIBUTES);
    } catch (error) {
      reporter.warnOnce('lag-record', 'recording event-loop lag failed; the next interval tries again', error);
    }
    // A record may have stopped us (a callback that calls stop()): then no new timer.
    if (!this.stopped) this.arm();
  }

  private arm(): void {
    this.intended = this.clock() + this.intervalMs;
    const timer = setTimeout(this.tick, this.intervalMs);
    timer.unref();
    this.timer = timer;
  }
}
