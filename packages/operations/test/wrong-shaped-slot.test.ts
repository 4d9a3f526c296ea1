// Whatever else lies in @gym/core's shared-slot global under other names (stale slots of an older
// shape, another package's), metered limits and operations work: this package reads only its own names.

import { expect, it } from '@jest/globals';
import { Semaphore } from 'async-mutex';

it('meteredLimit and resourcesOperation work over a wrong-shaped shared slot', async () => {
  const key = Symbol.for('@gym/core.shared.v1');
  const slots = new Map<string, unknown>([
    ['@gym/operations/metered-limits@1', 42],
    ['@gym/operations/live-series@1', 'not a map'],
  ]);
  Object.defineProperty(globalThis, key, { value: slots, configurable: true });
  try {
    const { meteredLimit, resourcesOperation } = await import('@gym/operations');
    const { createMetricHarness } = await import('@gym/test-kit');
    const { meterProvider } = createMetricHarness();
    const limit = meteredLimit(new Semaphore(1), { component: 'other', limitName: 'slot', meterProvider });
    const options = { operation: 'verify', executor: 'inline', meterProvider } as const;
    expect(await resourcesOperation(limit, options, () => 'ran')).toBe('ran');
    expect(limit.state()).toMatchObject({ active: 0, queued: 0 });
  } finally {
    Reflect.deleteProperty(globalThis, key);
  }
});
