// "Off is free" and "the decision taken at entry holds": the disabled path reads no clock,
// creates no instrument and moves no count, whatever the limit and however the operation ends;
// and an operation keeps the on/off decision it took at entry even if the process's exporting
// state changes while it runs. These tests use the OpenTelemetry API global and the published
// telemetry state (the only way to express "not exporting"), and restore both afterwards.

import { ATTR_EXECUTOR, ATTR_OPERATION, INSTRUMENTS } from '@gym/constants';
import { isMetricsExporting, setTelemetryState } from '@gym/core';
import { type OperationLimit, resourcesOperation } from '@gym/operations';
import {
  capture,
  collectMetrics,
  counterValue,
  createMetricHarness,
  deferred,
  histogramCount,
  histogramPoint,
  settle,
} from '@gym/test-kit';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { metrics } from '@opentelemetry/api';
import { Mutex, Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { countingLimit, FakeClock } from './helpers.js';

const SERIES = { [ATTR_OPERATION]: 'judge', [ATTR_EXECUTOR]: 'process' };

function publish(metricsExporting: boolean) {
  setTelemetryState({ metricsExporting, tracesExporting: false, spanGroups: [], orchestrator: false });
}

afterEach(() => {
  jest.restoreAllMocks();
  jest.useRealTimers();
  setTelemetryState(undefined);
  metrics.disable();
});

/** Runs a mix of operations (return, throw, abort while waiting, abort while running) through `limit`. */
async function mix(limit: OperationLimit | null) {
  const options = { operation: 'judge', executor: 'process' } as const;
  const hold = deferred();
  const holder = resourcesOperation(limit, options, () => hold.promise.then(() => 'held'));
  const waiting = new AbortController();
  const aborted = capture(resourcesOperation(limit, { ...options, signal: waiting.signal }, () => 'never'));
  const thrower = capture(
    resourcesOperation(limit, options, (op) => {
      op.outcome = 'crashed';
      throw new Error('crash');
    }),
  );
  const running = new AbortController();
  const cancelled = capture(
    resourcesOperation(limit, { ...options, signal: running.signal }, (op) => {
      running.abort();
      throw op.signal?.reason;
    }),
  );
  await settle();
  waiting.abort();
  hold.resolve();
  const results = await Promise.all([holder, aborted, thrower, cancelled]);
  const returned = await resourcesOperation(limit, options, () => 'returned');
  return { results, returned };
}

const LIMITS: [string, () => OperationLimit | null, (limit: never) => boolean][] = [
  ['Semaphore', () => new Semaphore(1), (s: Semaphore) => s.getValue() === 1],
  ['Mutex', () => new Mutex(), (m: Mutex) => !m.isLocked()],
  ['p-limit', () => pLimit(1), (l: ReturnType<typeof pLimit>) => l.activeCount + l.pendingCount === 0],
  ['acquire()/release()', () => countingLimit(1), (l: ReturnType<typeof countingLimit>) => l.free === 1],
  ['null (nothing waits, so the "aborted while waiting" one runs)', () => null, () => true],
];

describe('metrics not exporting', () => {
  it.each(LIMITS)(
    '%s: only enters and leaves the limit — no clock read, no instrument, no count',
    async (_k, make, isFree) => {
      // A real SDK is registered globally, but the published state says metrics are off.
      const { meterProvider: provider, reader } = createMetricHarness();
      metrics.setGlobalMeterProvider(provider);
      publish(false);
      expect(isMetricsExporting()).toBe(false);

      const limit = make();
      const clock = new FakeClock();
      const { results, returned } = await mix(limit);

      expect(returned).toBe('returned');
      expect(results[0]).toBe('held');
      expect(results[1]).toEqual(
        limit === null ? { ok: true, value: 'never' } : { ok: false, error: expect.anything() },
      );
      expect(results[2]).toMatchObject({ ok: false, error: new Error('crash') });
      expect(results[3]).toMatchObject({ ok: false });
      await settle();
      expect(isFree(limit as never)).toBe(true);
      expect(clock.reads).toBe(0);
      expect((await collectMetrics(reader)).size).toBe(0); // not even an instrument was created

      // Now turn metrics on: one operation, and the counts read as if the off ones never happened.
      publish(true);
      await resourcesOperation(limit, { operation: 'judge', executor: 'process' }, () => {});
      const m = await collectMetrics(reader);
      expect(histogramCount(m, INSTRUMENTS.operationQueueDuration.name)).toBe(1);
      expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1);
      expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(0);
      expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
    },
  );

  it('with no SDK registered and no state published, nothing is measured', async () => {
    expect(isMetricsExporting()).toBe(false);
    const clock = new FakeClock();
    const { returned } = await mix(new Semaphore(1));
    expect(returned).toBe('returned');
    expect(clock.reads).toBe(0);
  });
});

describe('an SDK set up by the user, without @gym/otel-bootstrap', () => {
  it('a globally registered MeterProvider is used when nobody published a state', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    metrics.setGlobalMeterProvider(provider);
    const { returned } = await mix(new Semaphore(1));
    expect(returned).toBe('returned');
    const m = await collectMetrics(reader);
    expect(histogramCount(m, INSTRUMENTS.operationQueueDuration.name)).toBe(5);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(4); // all but the one aborted while waiting
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
  });
});

describe('exporting state changes mid-operation: the decision taken at entry holds', () => {
  it('started while exporting, finished after metrics were turned off → still recorded, counts back to 0', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    metrics.setGlobalMeterProvider(provider);
    publish(true);
    const clock = new FakeClock();
    const hold = deferred();
    const running = resourcesOperation(null, { operation: 'judge', executor: 'process' }, () => hold.promise);
    await settle();
    publish(false);
    clock.time = 60;
    hold.resolve();
    await running;
    const m = await collectMetrics(reader);
    expect(
      histogramPoint(m, INSTRUMENTS.operationDuration.name, { ...SERIES, 'nemo.gym.resources.operation.outcome': 'ok' })
        .sum,
    ).toBe(60);
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
  });

  it('started while off, finished after metrics were turned on → nothing recorded, counts untouched', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    metrics.setGlobalMeterProvider(provider);
    publish(false);
    const clock = new FakeClock();
    const semaphore = new Semaphore(1);
    const options = { operation: 'judge', executor: 'process' } as const;
    const hold = deferred();
    const offRun = resourcesOperation(semaphore, options, () => hold.promise);
    await settle();
    publish(true);
    const onRun = resourcesOperation(semaphore, options, () => 'on'); // waits behind the off one
    await settle();
    const readsBeforeCollect = clock.reads; // the SDK reads the same clock when it collects
    let m = await collectMetrics(reader);
    const readsAfterCollect = clock.reads;
    expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(1);
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0); // the off one is not counted
    clock.time = 15;
    hold.resolve();
    await offRun;
    expect(await onRun).toBe('on');
    const ours = readsBeforeCollect + clock.reads - readsAfterCollect;
    m = await collectMetrics(reader);
    expect(histogramCount(m, INSTRUMENTS.operationQueueDuration.name)).toBe(1);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1);
    expect(histogramPoint(m, INSTRUMENTS.operationQueueDuration.name, SERIES).sum).toBe(15);
    expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(0);
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
    expect(ours).toBe(3); // the on one only: asked, held, ended
  });
});
