// Instruments are made once per meter and kept as long as the meter lives (a WeakMap), so a
// process that re-initialises telemetry gets fresh instruments. One memo for every package:
// when making them throws, nothing is kept, and the next call tries again (a meter is never
// written off).

import type { Meter } from '@opentelemetry/api';

/**
 * A per-meter memo of `create`: the returned function calls `create(meter)` the first time it
 * sees `meter` and returns the same value afterwards. When `create` throws, the error reaches
 * the caller (who reports it) and nothing is cached.
 */
export function perMeter<T>(create: (meter: Meter) => T): (meter: Meter) => T {
  const made = new WeakMap<Meter, T>();
  return (meter) => {
    let value = made.get(meter);
    if (value === undefined) {
      value = create(meter);
      made.set(meter, value);
    }
    return value;
  };
}
