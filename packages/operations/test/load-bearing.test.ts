// The load-bearing test: the core promise of this package is that a too-small limit shows up as
// queue time that grows while run time does not. With a limit of 1 and two operations, the second
// waits exactly as long as the first runs. Time is Jest's fake clock (which also drives
// `performance.now()`, the default clock), so nothing here depends on the machine's speed.

import { ATTR_EXECUTOR, ATTR_OPERATION, ATTR_OPERATION_OUTCOME, INSTRUMENTS } from '@gym/constants';
import { resourcesOperation } from '@gym/operations';
import {
  collectMetrics,
  counterValue,
  createMetricHarness,
  histogramPoint,
  type PullMetricReader,
} from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { useFakeTimers } from './helpers.js';
import { KINDS } from './kinds.js';

const SERIES = { [ATTR_OPERATION]: 'verify', [ATTR_EXECUTOR]: 'subprocess' };

beforeEach(() => {
  useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  jest.useRealTimers();
});

async function counts(reader: PullMetricReader) {
  const m = await collectMetrics(reader);
  return {
    queued: counterValue(m, INSTRUMENTS.operationQueued.name, SERIES),
    active: counterValue(m, INSTRUMENTS.operationActive.name, SERIES),
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe.each(KINDS.map((kind) => [kind.name, kind] as const))('limit 1 (%s), two operations', (_name, kind) => {
  it("the second's queue time equals the first's run time; queued reaches 1, active never exceeds 1, both end at 0", async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const { limit } = kind.make(1);
    const options = { operation: 'verify', executor: 'subprocess', meterProvider: provider } as const;
    const seen: { queued: number | undefined; active: number | undefined }[] = [];

    const first = resourcesOperation(limit, options, () => sleep(250).then(() => 'first'));
    const second = resourcesOperation(limit, options, () => sleep(100).then(() => 'second'));
    await jest.advanceTimersByTimeAsync(0);
    seen.push(await counts(reader)); // first running, second waiting

    await jest.advanceTimersByTimeAsync(249);
    seen.push(await counts(reader)); // 1 ms before the first ends: unchanged

    await jest.advanceTimersByTimeAsync(1);
    seen.push(await counts(reader)); // first done, second running

    await jest.advanceTimersByTimeAsync(100);
    expect(await first).toBe('first');
    expect(await second).toBe('second');
    seen.push(await counts(reader));

    expect(seen).toEqual([
      { queued: 1, active: 1 },
      { queued: 1, active: 1 },
      { queued: 0, active: 1 },
      { queued: 0, active: 0 },
    ]);
    expect(Math.max(...seen.map((s) => s.active ?? 0))).toBe(1);

    const m = await collectMetrics(reader);
    const queue = histogramPoint(m, INSTRUMENTS.operationQueueDuration.name, SERIES);
    const run = histogramPoint(m, INSTRUMENTS.operationDuration.name, { ...SERIES, [ATTR_OPERATION_OUTCOME]: 'ok' });
    // Run times: 250 (first) and 100 (second). Queue times: 0 (first) and 250 (second).
    expect(run).toMatchObject({ count: 2, sum: 350, min: 100, max: 250 });
    expect(queue).toMatchObject({ count: 2, sum: 250, min: 0 });
    expect(queue.max).toBe(run.max); // the second waited exactly as long as the first ran
  });
});
