// The unmeasured path's shortcuts keep the rules they shortcut: which options count as injected
// (own objects only, `null` is not injected: @gym/core's rule), which argument error is reported
// first when several are wrong, the one-entry limit cache never hands one limit's adapter to
// another, and a metered acquire()/release() limit moves its counts in pairs.

import { INSTRUMENTS } from '@gym/constants';
import { isMetricsExporting } from '@gym/core';
import { meteredLimit, type OperationLimit, resourcesOperation } from '@gym/operations';
import { capture, createMetricHarness, deferred, histogramCount, settle } from '@gym/test-kit';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import pLimit from 'p-limit';
import { countingLimit, FakeClock } from './helpers.js';

afterEach(() => {
  jest.restoreAllMocks();
  jest.useRealTimers();
});

const OPTIONS = { operation: 'tool', executor: 'inline' } as const;

/** An acquire()/release() limit that counts how often it was asked. */
function askedLimit(size: number) {
  const inner = countingLimit(size);
  const limit = {
    asked: 0,
    get free() {
      return inner.free;
    },
    acquire() {
      limit.asked++;
      return inner.acquire();
    },
  };
  return limit;
}

describe('what counts as an injected provider', () => {
  it('an injected provider is measured; `null` is not injected', async () => {
    const harness = createMetricHarness();
    const clock = new FakeClock();
    await resourcesOperation(countingLimit(1), { ...OPTIONS, meterProvider: null }, () => 1);
    expect(clock.reads).toBe(0);
    await resourcesOperation(countingLimit(1), { ...OPTIONS, meterProvider: harness.meterProvider }, () => 1);
    expect(clock.reads).toBeGreaterThan(0);
    expect(histogramCount(await harness.collect(), INSTRUMENTS.operationDuration.name)).toBe(1);
  });
});

describe('argument errors', () => {
  const badSignal = { aborted: 'no' };
  const cases: [string, Record<string, unknown>, unknown, RegExp, ErrorConstructor][] = [
    ['operation before executor', { operation: 'nope', executor: 'nope' }, () => 1, /options\.operation/, RangeError],
    ['executor before body', { operation: 'tool', executor: 'nope' }, 'not a body', /options\.executor/, RangeError],
    ['body before signal', { ...OPTIONS, signal: badSignal }, 42, /body must be a function/, TypeError],
    ['signal last', { ...OPTIONS, signal: badSignal }, () => 1, /options\.signal must be an AbortSignal/, TypeError],
  ];

  it.each(cases)(
    'several wrong: the first in order is reported (%s), and no limit is asked',
    async (_name, options, body, message, kind) => {
      const limit = askedLimit(1);
      const settled = await capture(resourcesOperation(limit, options as never, body as never));
      expect(settled.ok).toBe(false);
      if (!settled.ok) {
        expect(settled.error).toBeInstanceOf(kind);
        expect((settled.error as Error).message).toMatch(message);
      }
      expect(limit.asked).toBe(0);
    },
  );

  it('a limit of no known kind is a TypeError, also right after a valid limit was used', async () => {
    await resourcesOperation(pLimit(1), OPTIONS, () => 1);
    const settled = await capture(resourcesOperation({ notALimit: true } as never, OPTIONS, () => 1));
    expect(settled.ok).toBe(false);
    if (!settled.ok) expect(settled.error).toBeInstanceOf(TypeError);
  });
});

describe('the last-limit cache', () => {
  it('alternating plain and metered limits: each call waits on its own limit', async () => {
    const a = askedLimit(1);
    const b = askedLimit(1);
    const metered = meteredLimit(askedLimit(1), { component: 'resources', limitName: 'offpath_cache', capacity: 1 });
    const order: OperationLimit[] = [a, metered, a, b, metered, b, a];
    for (const limit of order) await resourcesOperation(limit, OPTIONS, () => 1);
    expect(a.asked).toBe(3);
    expect(b.asked).toBe(2);
    expect(metered.state()).toMatchObject({ active: 0, queued: 0, limit: 1, available: 1 });
  });
});

describe('a metered acquire()/release() limit on the unmeasured path', () => {
  it('counts queued and active in pairs, whether the body returns or throws, or acquire() rejects', async () => {
    expect(isMetricsExporting()).toBe(false);
    const inner = countingLimit(1);
    const metered = meteredLimit(inner, { component: 'resources', limitName: 'offpath_pairs', capacity: 1 });
    const hold = deferred();
    const holder = resourcesOperation(metered, OPTIONS, () => hold.promise.then(() => 'held'));
    const waiter = resourcesOperation(metered, OPTIONS, () => {
      throw new Error('body failed');
    });
    await settle();
    expect(metered.state()).toMatchObject({ active: 1, queued: 1 });
    hold.resolve();
    expect(await holder).toBe('held');
    await expect(waiter).rejects.toThrow('body failed');
    expect(metered.state()).toMatchObject({ active: 0, queued: 0, available: 1 });
    expect(inner.free).toBe(1);

    const refusing = meteredLimit(
      {
        acquire: () => Promise.reject(new Error('refused')),
      },
      { component: 'resources', limitName: 'offpath_refusing', capacity: 1 },
    );
    await expect(resourcesOperation(refusing, OPTIONS, () => 'never')).rejects.toThrow('refused');
    expect(refusing.state()).toMatchObject({ active: 0, queued: 0 });
  });

  it('acquire() resolving something else releases through release(), once', async () => {
    let released = 0;
    const limit = {
      acquire: () => Promise.resolve('a token'),
      release: () => {
        released++;
      },
    };
    const metered = meteredLimit(limit, { component: 'resources', limitName: 'offpath_release', capacity: 2 });
    expect(await resourcesOperation(metered, OPTIONS, () => 'ok')).toBe('ok');
    expect(await resourcesOperation(limit, OPTIONS, () => 'ok')).toBe('ok');
    expect(released).toBe(2);
    expect(metered.state()).toMatchObject({ active: 0, queued: 0 });
  });
});
