// One test per defect found by attacking the package (each fails on the version that scheduled
// work in a line of its own), on every limit kind, asserting on what a real SDK exports.

import { AsyncLocalStorage } from 'node:async_hooks';
import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_SERVER_NAME,
  MAX_LIMIT_NAMES,
  METRIC_CONCURRENCY_ACTIVE,
  METRIC_CONCURRENCY_AVAILABLE,
  METRIC_CONCURRENCY_LIMIT,
  METRIC_CONCURRENCY_QUEUE_DEPTH,
  METRIC_OPERATION_QUEUE_DURATION,
} from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import {
  AdmissionRejectedError,
  AdmissionTimeoutError,
  type MeterableLimit,
  meteredLimit,
  type OperationLimit,
  resourcesOperation,
} from '@gym/operations';
import {
  capture,
  captureDiag,
  collectMetrics,
  createMetricHarness,
  createSpanHarness,
  deferred,
  gaugeValue,
  histogramPoint,
  resetDiag,
  settle,
} from '@gym/test-kit';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { context, metrics } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { Mutex, Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import pLimit6 from 'p-limit-6';
import { countingLimit } from './helpers.js';

const OPTIONS = { operation: 'verify', executor: 'subprocess' } as const;
const EXPORTING = { metricsExporting: true, tracesExporting: false, spanGroups: [], orchestrator: false };

/** Every kind of limit, with `n` slots (a Mutex has one). */
const KINDS: [string, (n: number) => MeterableLimit][] = [
  ['Semaphore', (n) => new Semaphore(n)],
  ['Mutex', () => new Mutex()],
  ['p-limit 7', (n) => pLimit(n)],
  ['p-limit 6', (n) => pLimit6(n)],
  ['acquire()/release()', (n) => countingLimit(n)],
];
/** The capacity option a limit of this kind takes: only an acquire()/release() object needs one. */
const capacityOf = (name: string, n: number) => (name === 'acquire()/release()' ? n : undefined);

/** The same, plus each wrapped in a metered limit, plus unlimited work. */
const ALL_KINDS: [string, (n: number) => OperationLimit | null][] = [
  ...KINDS,
  ...KINDS.map(([name, make]): [string, (n: number) => OperationLimit] => [
    `metered ${name}`,
    (n) =>
      meteredLimit(make(n), {
        component: 'other',
        limitName: 'kinds',
        capacity: capacityOf(name, n),
      }),
  ]),
  ['null', () => null],
];

afterEach(() => {
  jest.useRealTimers();
  setTelemetryState(undefined);
  metrics.disable();
  context.disable();
  resetDiag();
});

describe('the body runs in its caller’s async context', () => {
  describe.each(ALL_KINDS)('%s', (_kind, make) => {
    it.each([
      ['off, no signal', false, false],
      ['off, with a signal', false, true],
      ['measured, no signal', true, false],
      ['measured, with a signal', true, true],
    ])('%s: every body reads its own request’s AsyncLocalStorage', async (_name, measured, withSignal) => {
      const { meterProvider } = createMetricHarness();
      const limit = make(2);
      const store = new AsyncLocalStorage<number>();
      const wrong: number[] = [];
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          store.run(i, () =>
            resourcesOperation(
              limit,
              {
                ...OPTIONS,
                meterProvider: measured ? meterProvider : undefined,
                signal: withSignal ? new AbortController().signal : undefined,
              },
              async () => {
                await settle(2);
                if (store.getStore() !== i) wrong.push(i);
              },
            ),
          ),
        ),
      );
      expect(wrong).toEqual([]);
    });

    it('with a global MeterProvider exporting: every child span gets its own request’s parent', async () => {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      const { meterProvider } = createMetricHarness();
      metrics.setGlobalMeterProvider(meterProvider);
      setTelemetryState(EXPORTING);
      const spans = createSpanHarness();
      const limit = make(2);
      const parents = Array.from({ length: 10 }, (_, i) => spans.parent(`parent-${i}`));
      await Promise.all(
        parents.map(({ context: parent }, i) =>
          context.with(parent, () =>
            resourcesOperation(limit, { ...OPTIONS, signal: new AbortController().signal }, async () => {
              await settle(2);
              spans.tracer.startSpan(`child-${i}`).end();
            }),
          ),
        ),
      );
      for (const [i, { span }] of parents.entries()) {
        const [child] = spans.spans(`child-${i}`);
        expect(child?.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
      }
      await spans.shutdown();
    });
  });
});

describe('admission: a call that finds a free slot is never refused', () => {
  describe.each(KINDS.filter(([name]) => name !== 'Mutex'))('%s', (kind, make) => {
    it.each([
      ['maxQueued 0', 0],
      ['maxQueued 2', 2],
    ])(
      '%s: a burst exactly as large as the free slots plus the queue runs whole; one more is refused',
      async (_n, maxQueued) => {
        const limit = meteredLimit(make(8), {
          component: 'other',
          limitName: 'burst',
          capacity: capacityOf(kind, 8),
          maxQueued,
        });
        const hold = deferred();
        const calls = Array.from({ length: 8 + maxQueued + 1 }, () =>
          capture(resourcesOperation(limit, { ...OPTIONS, signal: new AbortController().signal }, () => hold.promise)),
        );
        await settle();
        hold.resolve();
        const results = await Promise.all(calls);
        const refused = results.filter((r) => !r.ok);
        expect(refused).toHaveLength(1);
        expect(refused[0]?.ok === false && refused[0].error instanceof AdmissionRejectedError).toBe(true);
        expect(results.indexOf(refused[0] as never)).toBe(8 + maxQueued); // the last one
        expect(limit.state()).toMatchObject({ active: 0, queued: 0, admissionRejected: 1 });
      },
    );
  });
});

describe('direct callers of the same limiter never overtake a waiting operation', () => {
  it.each<[string, () => { limit: OperationLimit; direct: (fn: () => unknown) => Promise<unknown> }]>([
    [
      'p-limit 7',
      () => {
        const l = pLimit(1);
        return { limit: l, direct: (fn) => l(fn) };
      },
    ],
    [
      'p-limit 6',
      () => {
        const l = pLimit6(1);
        return { limit: l, direct: (fn) => l(fn) };
      },
    ],
    [
      'Semaphore (runExclusive)',
      () => {
        const s = new Semaphore(1);
        return { limit: s, direct: (fn) => s.runExclusive(fn) };
      },
    ],
  ])('%s: the operation runs before the direct calls queued after it', async (_kind, make) => {
    const { limit, direct } = make();
    const { meterProvider } = createMetricHarness();
    const log: string[] = [];
    const hold = deferred();
    const holder = direct(() => hold.promise);
    await settle();
    const op = resourcesOperation(limit, { ...OPTIONS, meterProvider, signal: new AbortController().signal }, () => {
      log.push('operation');
    });
    await settle();
    const directs = Array.from({ length: 50 }, () => direct(() => log.push('direct')));
    hold.resolve();
    await Promise.all([holder, op, ...directs]);
    expect(log[0]).toBe('operation');
    expect(log).toHaveLength(51);
  });
});

describe('limit and available are read live at collection', () => {
  it('a Semaphore: setValue shows at the next collection; active is this limit’s own count', async () => {
    const { meterProvider, reader } = createMetricHarness();
    const semaphore = new Semaphore(8);
    meteredLimit(semaphore, { component: 'other', limitName: 'live_sem', meterProvider });
    semaphore.setValue(2);
    const m = await collectMetrics(reader);
    expect(gaugeValue(m, METRIC_CONCURRENCY_LIMIT)).toBe(2);
    expect(gaugeValue(m, METRIC_CONCURRENCY_ACTIVE)).toBe(0);
    expect(gaugeValue(m, METRIC_CONCURRENCY_AVAILABLE)).toBe(2);
  });

  it.each([
    ['p-limit 7', pLimit],
    ['p-limit 6', pLimit6],
  ])('%s: a change of concurrency shows at the next collection', async (_kind, make) => {
    const { meterProvider, reader } = createMetricHarness();
    const limiter = make(2);
    const limit = meteredLimit(limiter, { component: 'other', limitName: 'live_plimit', meterProvider });
    const hold = deferred();
    const running = limit.run(() => hold.promise);
    limiter.concurrency = 5;
    const m = await collectMetrics(reader);
    expect(gaugeValue(m, METRIC_CONCURRENCY_LIMIT)).toBe(5);
    expect(gaugeValue(m, METRIC_CONCURRENCY_ACTIVE)).toBe(1);
    expect(gaugeValue(m, METRIC_CONCURRENCY_AVAILABLE)).toBe(4);
    hold.resolve();
    await running;
  });

  it('pLimit(Infinity): no limit or available point (it is not saturated); active and queue depth are', async () => {
    const { meterProvider, reader } = createMetricHarness();
    const limit = meteredLimit(pLimit(Number.POSITIVE_INFINITY), {
      component: 'other',
      limitName: 'unbounded',
      meterProvider,
    });
    const hold = deferred();
    const running = limit.run(() => hold.promise);
    const m = await collectMetrics(reader);
    expect(m.get(METRIC_CONCURRENCY_LIMIT)).toBeUndefined();
    expect(m.get(METRIC_CONCURRENCY_AVAILABLE)).toBeUndefined();
    expect(gaugeValue(m, METRIC_CONCURRENCY_ACTIVE)).toBe(1);
    expect(gaugeValue(m, METRIC_CONCURRENCY_QUEUE_DEPTH)).toBe(0);
    hold.resolve();
    await running;
  });
});

describe('a signal that is not a real AbortSignal is refused with a TypeError before anything is acquired', () => {
  const throwing = {
    get aborted(): boolean {
      throw new Error('no');
    },
    addEventListener() {},
    removeEventListener() {},
  };
  const lookAlikes: [string, unknown][] = [
    ['a look-alike object', { aborted: false, reason: undefined, addEventListener() {}, removeEventListener() {} }],
    ['a look-alike whose aborted getter throws', throwing],
    ['an object made from AbortSignal.prototype', Object.create(AbortSignal.prototype)],
  ];
  describe.each(ALL_KINDS)('%s', (_kind, make) => {
    it.each(lookAlikes)('%s', async (_name, signal) => {
      const limit = make(1);
      let ran = false;
      const settled = await capture(
        resourcesOperation(limit, { ...OPTIONS, signal: signal as AbortSignal }, () => {
          ran = true;
        }),
      );
      expect(settled.ok === false && settled.error instanceof TypeError).toBe(true);
      await settle();
      expect(ran).toBe(false);
      // Nothing was taken: the next call gets the slot at once.
      expect(await resourcesOperation(limit, OPTIONS, () => 'free')).toBe('free');
    });
  });
});

describe('p-limit: the slot is free when the operation returns', () => {
  describe.each([
    ['p-limit 7', pLimit],
    ['p-limit 6', pLimit6],
  ])('%s', (_kind, make) => {
    it.each([
      ['off', false],
      ['measured', true],
    ])('%s: activeCount is 0 as soon as await returns, whether the body returns or throws', async (_name, measured) => {
      const { meterProvider } = createMetricHarness();
      const limiter = make(3);
      const options = { ...OPTIONS, meterProvider: measured ? meterProvider : undefined };
      await resourcesOperation(limiter, options, async () => 1);
      expect(limiter.activeCount).toBe(0);
      await capture(
        resourcesOperation(limiter, options, async () => {
          throw new Error('body failed');
        }),
      );
      expect(limiter.activeCount).toBe(0);
    });
  });
});

it('the global provider switched A → B → A: each metered limit is exported once on A', async () => {
  const a = createMetricHarness();
  const b = createMetricHarness();
  setTelemetryState(EXPORTING);
  metrics.setGlobalMeterProvider(a.meterProvider);
  const limit = meteredLimit(new Semaphore(2), { component: 'other', limitName: 'switched' });
  metrics.disable();
  metrics.setGlobalMeterProvider(b.meterProvider);
  await limit.run(() => 1);
  metrics.disable();
  metrics.setGlobalMeterProvider(a.meterProvider);
  await limit.run(() => 1);
  const switched = { [ATTR_CONCURRENCY_COMPONENT]: 'other', [ATTR_CONCURRENCY_LIMIT_NAME]: 'switched' };
  const m = await collectMetrics(a.reader);
  const points = m.get(METRIC_CONCURRENCY_LIMIT)?.dataPoints ?? [];
  expect(points.filter((p) => p.attributes[ATTR_CONCURRENCY_LIMIT_NAME] === 'switched')).toHaveLength(1);
  expect(gaugeValue(m, METRIC_CONCURRENCY_LIMIT, switched)).toBe(2);
  expect(gaugeValue(await collectMetrics(b.reader), METRIC_CONCURRENCY_LIMIT, switched)).toBe(2);
});

it('serverName is bounded like limit names: beyond 64 distinct ones a limit works but is not exported', async () => {
  const diag = captureDiag();
  const { meterProvider, reader } = createMetricHarness();
  const make = (serverName: string) =>
    meteredLimit(new Semaphore(1), { component: 'other', limitName: 'per_server', serverName, meterProvider });
  const limits = Array.from({ length: MAX_LIMIT_NAMES }, (_, i) => make(`server-${i}`));
  const refused = make('one-too-many');
  expect(await refused.run(() => 'works')).toBe('works');
  const m = await collectMetrics(reader);
  const servers = (m.get(METRIC_CONCURRENCY_LIMIT)?.dataPoints ?? []).map((p) => p.attributes[ATTR_SERVER_NAME]);
  expect(servers).toHaveLength(MAX_LIMIT_NAMES);
  expect(servers).not.toContain('one-too-many');
  expect(diag.atLeast('warn').map((e) => e.message)).toEqual([
    expect.stringMatching(/more than 64 distinct metered server names/),
  ]);
  expect(limits).toHaveLength(MAX_LIMIT_NAMES);
});

describe('queue time: refusals record none; cancelled and timed-out waits record what they really waited', () => {
  it.each(KINDS)('%s', async (kind, make) => {
    jest.useFakeTimers();
    const { meterProvider, reader } = createMetricHarness();
    const limit = meteredLimit(make(1), {
      component: 'other',
      limitName: 'waited',
      capacity: capacityOf(kind, 1),
      admissionTimeoutMs: 100,
      maxQueued: 2,
      meterProvider,
    });
    const options = { ...OPTIONS, meterProvider };
    const hold = deferred();
    const holder = resourcesOperation(limit, options, () => hold.promise);
    await jest.advanceTimersByTimeAsync(0);
    const controller = new AbortController();
    const timedOut = capture(resourcesOperation(limit, options, () => 'never'));
    const cancelled = capture(resourcesOperation(limit, { ...options, signal: controller.signal }, () => 'never'));
    const refused = await capture(resourcesOperation(limit, options, () => 'never'));
    expect(refused.ok === false && refused.error instanceof AdmissionRejectedError).toBe(true);
    await jest.advanceTimersByTimeAsync(30);
    controller.abort(new Error('gone'));
    await jest.advanceTimersByTimeAsync(70);
    const timeout = await timedOut;
    expect(timeout.ok === false && timeout.error instanceof AdmissionTimeoutError).toBe(true);
    expect((await cancelled).ok).toBe(false);
    hold.resolve();
    await holder;
    const point = histogramPoint(await collectMetrics(reader), METRIC_OPERATION_QUEUE_DURATION, {
      [ATTR_OPERATION]: OPTIONS.operation,
      [ATTR_EXECUTOR]: OPTIONS.executor,
    });
    expect(point.count).toBe(3); // the holder (0 ms), the cancelled (30 ms), the timed out (100 ms)
    expect(point.sum).toBe(130);
    expect(limit.state()).toMatchObject({
      active: 0,
      queued: 0,
      admissionRejected: 1,
      admissionTimeouts: 1,
      admissionCancelled: 1,
    });
  });
});
