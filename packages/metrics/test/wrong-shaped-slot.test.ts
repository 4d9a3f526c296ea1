// A shared slot that holds something of the wrong shape (another copy wrote a different
// version, or anything at all) must never make a recorder throw into its caller: the one
// try/catch at the recorder's edge reports it once and the caller carries on.

import { createMetricHarness } from '@gym/test-kit';
import { expect, it } from '@jest/globals';

it('recordVerify over a wrong-shaped verify tally never throws', async () => {
  const key = Symbol.for('@gym/core.shared.v1');
  const slots = new Map<string, unknown>([['@gym/metrics/verify-tally@1', 'not a tally']]);
  Object.defineProperty(globalThis, key, { value: slots, configurable: true });
  try {
    const { GymMetrics, recordVerify } = await import('@gym/metrics');
    const { meterProvider } = createMetricHarness();
    expect(() => new GymMetrics({ meterProvider }).recordVerify(5, true)).not.toThrow();
    expect(() => recordVerify(5, false)).not.toThrow();
  } finally {
    Reflect.deleteProperty(globalThis, key);
  }
});
