// resolveMeter remembers its last answer; that memory must not keep a provider (nor the meter
// it made) alive once the caller dropped it. Full collections are forced (--expose-gc switched
// on for this file only), and the test waits for the WeakRef to clear.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createReporter, resolveMeter } from '@gym/core/internal';
import { expect, it } from '@jest/globals';
import { MeterProvider } from '@opentelemetry/sdk-metrics';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
setFlagsFromString('--no-expose-gc');

/** Whether `ref`'s target is collected within a few full collections, each in a later turn. */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setImmediate(resolve)); // a WeakRef read keeps its target until the turn ends
    gc();
    if (ref.deref() === undefined) return true;
  }
  return false;
}

const scope = { name: '@gym/gc-test', version: '0.0.0' };
const reporter = createReporter('@gym/gc-test');

it('the last provider resolved, and its meter, are collected once the caller dropped them', async () => {
  const [providerRef, meterRef] = (() => {
    const provider = new MeterProvider();
    const meter = resolveMeter({ meterProvider: provider }, scope, reporter);
    expect(resolveMeter({ meterProvider: provider }, scope, reporter)).toBe(meter);
    return [new WeakRef(provider), new WeakRef(meter as object)];
  })();
  expect(await collected(providerRef)).toBe(true);
  expect(await collected(meterRef)).toBe(true);
});
