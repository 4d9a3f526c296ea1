// A clock the test moves by hand, counting its reads (off-path tests assert zero reads).

export class ManualClock {
  time: number;
  reads = 0;
  constructor(start = 0) {
    this.time = start;
  }
  /** Reads the clock (pass this where a `() => number` clock is injected). */
  readonly now = (): number => {
    this.reads++;
    return this.time;
  };
  /** Moves time forward by `ms`; a negative or non-finite step is a test bug. */
  advance(ms: number): this {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance() takes a finite ms >= 0, got ${String(ms)}`);
    this.time += ms;
    return this;
  }
}
