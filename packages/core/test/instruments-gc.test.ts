// resolveMeter remembers its last answer; that memory must not keep a provider (nor the meter
// it made) alive once the caller dropped it: full collections are forced until the WeakRef clears.

import { createReporter, resolveMeter } from '@gym/core/internal';
import { collectedByGc } from '@gym/test-kit';
import { expect, it } from '@jest/globals';
import { MeterProvider } from '@opentelemetry/sdk-metrics';

const scope = { name: '@gym/gc-test', version: '0.0.0' };
const reporter = createReporter('@gym/gc-test');

it('the last provider resolved, and its meter, are collected once the caller dropped them', async () => {
  const [providerRef, meterRef] = (() => {
    const provider = new MeterProvider();
    const meter = resolveMeter({ meterProvider: provider }, scope, reporter);
    expect(resolveMeter({ meterProvider: provider }, scope, reporter)).toBe(meter);
    return [new WeakRef(provider), new WeakRef(meter as object)];
  })();
  expect(await collectedByGc(providerRef)).toBe(true);
  expect(await collectedByGc(meterRef)).toBe(true);
});
