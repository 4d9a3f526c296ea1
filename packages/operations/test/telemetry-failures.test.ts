// A meter provider or a meter that fails is a telemetry failure: it never fails the operation,
// is reported once, and is tried again on the next operation (never written off).

import { ATTR_EXECUTOR, ATTR_OPERATION, INSTRUMENTS } from '@gym/constants';
import { resourcesOperation } from '@gym/operations';
import { captureDiag, collectMetrics, createMetricHarness, type DiagCapture, histogramCount } from '@gym/test-kit';
import { afterAll, afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { MeterProvider } from '@opentelemetry/api';
import { providerOf } from './helpers.js';

const _SERIES = { [ATTR_OPERATION]: 'verify', [ATTR_EXECUTOR]: 'process' };

// Reporting is once per kind per process (per test file here): each test may see the warning at
// most once, and the whole file sees each kind exactly once.
const allWarnings: string[] = [];
let diagnostics: DiagCapture;
beforeEach(() => {
  diagnostics = captureDiag();
});
afterEach(() => {
  allWarnings.push(...warnings());
  diagnostics.stop();
});
/** The warning and error messages of the running test. */
function warnings(): string[] {
  return diagnostics.atLeast('warn').map((entry) => entry.message);
}
afterAll(() => {
  for (const text of ['getting a meter failed']) {
    expect([text, allWarnings.filter((w) => w.includes(text)).length]).toEqual([text, 1]);
  }
});

describe('a meter provider that fails is tried again, never written off', () => {
  it('getMeter() throws once, then works: the next operation is recorded', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    let calls = 0;
    const flaky: MeterProvider = {
      getMeter(name, version, options) {
        calls++;
        if (calls === 1) throw new Error('not yet');
        return provider.getMeter(name, version, options);
      },
    };
    const options = { operation: 'verify', executor: 'process', meterProvider: flaky } as const;
    expect(await resourcesOperation(null, options, () => 'first')).toBe('first');
    expect(await resourcesOperation(null, options, () => 'second')).toBe('second');
    const m = await collectMetrics(reader);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1);
    expect(warnings().filter((w) => w.includes('getting a meter failed'))).toHaveLength(1);
  });

  it('creating the instruments throws once, then works: the next operation is recorded', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const meter = provider.getMeter('flaky');
    let first = true;
    const flaky = new Proxy(meter, {
      get(target, key, receiver) {
        if (key === 'createHistogram' && first) {
          first = false;
          return () => {
            throw new Error('not yet');
          };
        }
        const value = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const options = { operation: 'verify', executor: 'process', meterProvider: providerOf(flaky) } as const;
    expect(await resourcesOperation(null, options, () => 1)).toBe(1);
    expect(await resourcesOperation(null, options, () => 2)).toBe(2);
    expect(histogramCount(await collectMetrics(reader), INSTRUMENTS.operationDuration.name)).toBe(1);
  });
});
