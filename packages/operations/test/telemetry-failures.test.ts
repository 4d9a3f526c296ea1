// A clock, a meter or a telemetry option that throws is a telemetry failure: it never fails the
// operation, never keeps a slot, never leaves queued/active off by one, and is reported once.
// Each case runs a holder, a waiter and a lone operation through every kind of limit.

import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  METRIC_OPERATION_ACTIVE,
  METRIC_OPERATION_DURATION,
  METRIC_OPERATION_QUEUE_DURATION,
  METRIC_OPERATION_QUEUED,
} from '@gym/constants';
import { type OperationLimit, type ResourcesOperationOptions, resourcesOperation } from '@gym/operations';
import {
  capture,
  captureDiag,
  collectMetrics,
  counterValue,
  createMetricHarness,
  type DiagCapture,
  deferred,
  histogramCount,
  settle,
} from '@gym/test-kit';
import { afterAll, afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { MeterProvider } from '@opentelemetry/api';
import { Mutex, Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { countingLimit } from './helpers.js';

const SERIES = { [ATTR_OPERATION]: 'verify', [ATTR_EXECUTOR]: 'process' };

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
  for (const text of ['the clock threw', 'getting a meter failed']) {
    expect([text, allWarnings.filter((w) => w.includes(text)).length]).toEqual([text, 1]);
  }
});

const LIMITS: [string, () => { limit: OperationLimit | null; isFree: () => boolean }][] = [
  ['Semaphore', () => sem()],
  ['Mutex', () => mutex()],
  ['p-limit', () => plimit()],
  ['acquire()/release()', () => counting()],
  ['null', () => ({ limit: null, isFree: () => true })],
];
function sem() {
  const s = new Semaphore(1);
  return { limit: s, isFree: () => s.getValue() === 1 };
}
function mutex() {
  const m = new Mutex();
  return { limit: m, isFree: () => !m.isLocked() };
}
function plimit() {
  const l = pLimit(1);
  return { limit: l, isFree: () => l.activeCount + l.pendingCount === 0 };
}
function counting() {
  const c = countingLimit(1);
  return { limit: c, isFree: () => c.free === 1 };
}

/** A holder, a waiter behind it and a lone operation after them, with `options`. Returns what they returned. */
async function scenario(limit: OperationLimit | null, options: ResourcesOperationOptions) {
  const hold = deferred();
  const holder = capture(resourcesOperation(limit, options, () => hold.promise.then(() => 'held')));
  const waiter = capture(
    resourcesOperation(limit, options, (op) => {
      op.outcome = 'timeout';
      throw new Error('waiter failed');
    }),
  );
  await settle();
  hold.resolve();
  const results = [await holder, await waiter];
  results.push(await capture(resourcesOperation(limit, options, () => 'lone')));
  await settle();
  return results;
}

const EXPECTED = [
  { ok: true, value: 'held' },
  { ok: false, error: new Error('waiter failed') },
  { ok: true, value: 'lone' },
];

describe('a clock that throws', () => {
  describe.each(LIMITS)('%s', (_kind, make) => {
    it.each([1, 2, 3, 4, 5, 6, 7, 8])(
      'throwing on read %i (and after): results unchanged, slots free, counts exact, durations recorded as 0',
      async (failFrom) => {
        const { meterProvider: provider, reader } = createMetricHarness();
        const { limit, isFree } = make();
        let reads = 0;
        const clock = () => {
          reads++;
          if (reads >= failFrom) throw new Error('clock broke');
          return reads;
        };
        const results = await scenario(limit, {
          operation: 'verify',
          executor: 'process',
          meterProvider: provider,
          clock,
        });
        expect(results).toEqual(EXPECTED);
        expect(isFree()).toBe(true);
        const m = await collectMetrics(reader);
        expect(counterValue(m, METRIC_OPERATION_QUEUED, SERIES)).toBe(0);
        expect(counterValue(m, METRIC_OPERATION_ACTIVE, SERIES)).toBe(0);
        // Every operation is still counted: the durations the clock could not give are 0.
        expect(histogramCount(m, METRIC_OPERATION_QUEUE_DURATION)).toBe(3);
        expect(histogramCount(m, METRIC_OPERATION_DURATION)).toBe(3);
        expect(warnings().filter((w) => w.includes('the clock threw')).length).toBeLessThanOrEqual(1);
      },
    );
  });

  it('a clock that returns a bigint or a string: durations 0, never a TypeError', async () => {
    for (const bad of [() => 10n, () => '10']) {
      const { meterProvider: provider, reader } = createMetricHarness();
      const results = await scenario(new Semaphore(1), {
        operation: 'verify',
        executor: 'process',
        meterProvider: provider,
        clock: bad as never,
      });
      expect(results).toEqual(EXPECTED);
      expect(histogramCount(await collectMetrics(reader), METRIC_OPERATION_DURATION)).toBe(3);
    }
  });
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
    expect(histogramCount(m, METRIC_OPERATION_DURATION)).toBe(1);
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
    const options = { operation: 'verify', executor: 'process', meter: flaky } as const;
    expect(await resourcesOperation(null, options, () => 1)).toBe(1);
    expect(await resourcesOperation(null, options, () => 2)).toBe(2);
    expect(histogramCount(await collectMetrics(reader), METRIC_OPERATION_DURATION)).toBe(1);
  });
});
