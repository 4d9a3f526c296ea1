// One measured operation: its clock readings and its moves between the live counts. It exists
// only on the measured path; the unmeasured path never builds one, which is what keeps that
// path free of clock reads and count updates.
//
// Every method is total. Counts move first (plain integers, they cannot fail); then the clock
// is read through `read()`, which turns a throwing or non-numeric clock into NaN (recorded as 0,
// reported once); recording failures are swallowed by OperationMetrics. So a broken clock or
// meter can neither fail the operation nor leave queued/active off by one.

import type { Outcome } from '@gym/constants';
import type { Cancellable, Lifecycle } from './internal-types.js';
import type { OperationMetrics, Series } from './operation-metrics.js';
import { reporter } from './report.js';

/** Default clock: read through the global each time, so fake timers that replace it are seen. */
export function defaultClock(): number {
  return performance.now();
}

/** The measurement of one operation on the measured path. */
export class Measurement implements Lifecycle {
  private askedAt = Number.NaN;
  private heldAt = Number.NaN;
  private waiting = false;

  constructor(
    private readonly metrics: OperationMetrics,
    private readonly series: Series,
    private readonly clock: () => number,
  ) {}

  /** The operation asks its limit (first clock read). */
  asked(): void {
    this.waiting = true;
    this.series.queued++;
    this.askedAt = this.read();
  }

  /** A measurement never refuses a wait. */
  mustWait(_wait: Cancellable, _certain: boolean): Error | undefined {
    return undefined;
  }

  /**
   * The operation holds its limit; records the queue wait. Called without `asked` (unlimited
   * work, which never waits): a queue wait of 0 and one clock read.
   */
  held(): void {
    const waited = this.waiting;
    if (waited) {
      this.waiting = false;
      this.series.queued--;
    }
    this.series.active++;
    const now = this.read();
    this.heldAt = now;
    this.metrics.recordQueue(this.series, waited ? now - this.askedAt : 0);
  }

  /** The signal was aborted before the limit was asked: a queue wait of 0, nothing else. */
  abortedBeforeAsking(): void {
    this.metrics.recordQueue(this.series, 0);
  }

  /** The operation stopped waiting without holding (abort, refusal, the limit failed). Idempotent. */
  gaveUp(_reason: unknown): void {
    if (!this.waiting) return;
    this.waiting = false;
    this.series.queued--;
    this.metrics.recordQueue(this.series, this.read() - this.askedAt);
  }

  /** The body ended with `outcome` and the limit was left (last clock read). */
  ended(outcome: Outcome): void {
    this.series.active--;
    this.metrics.recordRun(this.series, outcome, this.read() - this.heldAt);
  }

  /** The clock, or NaN when it throws or returns something that is not a number. */
  private read(): number {
    try {
      const now = this.clock();
      if (typeof now === 'number') return now;
      reporter.warnOnce('clock', 'the clock returned a non-number; durations are recorded as 0');
    } catch (error) {
      reporter.warnOnce('clock', 'the clock threw; durations are recorded as 0', error);
    }
    return Number.NaN;
  }
}
