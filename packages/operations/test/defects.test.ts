// One test per defect found by attacking the package (each fails on the version that scheduled
// work in a line of its own), on every limit kind, asserting on what a real SDK exports.

import { AsyncLocalStorage } from 'node:async_hooks';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_SERVER_NAME,
  INSTRUMENTS,
  MAX_LIMIT_NAMES,
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
  counterValue,
  createMetricHarness,
  createSpanHarness,
  deferred,
  gaugeValue,
  histogramPoint,
  REPO_ROOT,
  resetDiag,
  settle,
} from '@gym/test-kit';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { context, metrics } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { Mutex, Semaphore, withTimeout } from 'async-mutex';
import pLimit from 'p-limit';
import pLimit6 from 'p-limit-6';
import { countingLimit, FakeClock } from './helpers.js';

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

/** The five gauges of one limit (the only one exported, unless `attributes` says which). */
function gauges(m: Awaited<ReturnType<typeof collectMetrics>>, attributes?: Record<string, string>) {
  return {
    limit: gaugeValue(m, INSTRUMENTS.concurrencyLimit.name, attributes),
    active: gaugeValue(m, INSTRUMENTS.concurrencyActive.name, attributes),
    available: gaugeValue(m, INSTRUMENTS.concurrencyAvailable.name, attributes),
    queued: gaugeValue(m, INSTRUMENTS.concurrencyQueueDepth.name, attributes),
    oldest: gaugeValue(m, INSTRUMENTS.concurrencyOldestWait.name, attributes),
  };
}

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
    expect(gaugeValue(m, INSTRUMENTS.concurrencyLimit.name)).toBe(2);
    expect(gaugeValue(m, INSTRUMENTS.concurrencyActive.name)).toBe(0);
    expect(gaugeValue(m, INSTRUMENTS.concurrencyAvailable.name)).toBe(2);
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
    expect(gaugeValue(m, INSTRUMENTS.concurrencyLimit.name)).toBe(5);
    expect(gaugeValue(m, INSTRUMENTS.concurrencyActive.name)).toBe(1);
    expect(gaugeValue(m, INSTRUMENTS.concurrencyAvailable.name)).toBe(4);
    hold.resolve();
    await running;
  });

  it('pLimit(Infinity) is no limit: no gauge point (it is never saturated); its admission counters are', async () => {
    const { meterProvider, reader } = createMetricHarness();
    const limit = meteredLimit(pLimit(Number.POSITIVE_INFINITY), {
      component: 'other',
      limitName: 'unbounded',
      meterProvider,
    });
    const hold = deferred();
    const running = limit.run(() => hold.promise);
    const m = await collectMetrics(reader);
    for (const name of [
      INSTRUMENTS.concurrencyLimit.name,
      INSTRUMENTS.concurrencyAvailable.name,
      INSTRUMENTS.concurrencyActive.name,
      INSTRUMENTS.concurrencyQueueDepth.name,
      INSTRUMENTS.concurrencyOldestWait.name,
    ]) {
      expect(m.get(name)).toBeUndefined();
    }
    expect(counterValue(m, INSTRUMENTS.admissionRejected.name)).toBe(0);
    expect(limit.state()).toMatchObject({ active: 1, queued: 0 });
    hold.resolve();
    await running;
  });

  it('a pLimit(3) made unbounded while 6 run: a cumulative reader keeps an idle limit, never a busy one', async () => {
    const { meterProvider, reader } = createMetricHarness();
    const limiter = pLimit(3);
    const limit = meteredLimit(limiter, { component: 'other', limitName: 'unbounded_later', meterProvider });
    const hold = deferred();
    const running = Array.from({ length: 6 }, () => limit.run(() => hold.promise));
    await settle();
    expect(gauges(await collectMetrics(reader))).toMatchObject({ limit: 3, active: 3, available: 0, queued: 3 });
    limiter.concurrency = Number.POSITIVE_INFINITY;
    await settle();
    expect(limit.state()).toMatchObject({ active: 6, queued: 0 });
    // Three collections over time, while the six still run and after they ended.
    const idle = { limit: 3, active: 0, available: 3, queued: 0, oldest: 0 };
    expect(gauges(await collectMetrics(reader))).toEqual(idle);
    expect(gauges(await collectMetrics(reader))).toEqual(idle);
    hold.resolve();
    await Promise.all(running);
    expect(gauges(await collectMetrics(reader))).toEqual(idle);
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

it('the global provider switched A → B → A: each metered limit is exported once, on A only', async () => {
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
  const points = m.get(INSTRUMENTS.concurrencyLimit.name)?.dataPoints ?? [];
  expect(points.filter((p) => p.attributes[ATTR_CONCURRENCY_LIMIT_NAME] === 'switched')).toHaveLength(1);
  expect(gaugeValue(m, INSTRUMENTS.concurrencyLimit.name, switched)).toBe(2);
  // B is no longer the global provider: it reports the limit no more.
  expect((await collectMetrics(b.reader)).get(INSTRUMENTS.concurrencyLimit.name)).toBeUndefined();
});

it('the global provider switched A → B while the limit is busy: A’s cumulative reader keeps it idle, B reports it', async () => {
  const a = createMetricHarness();
  const b = createMetricHarness();
  const busy = { [ATTR_CONCURRENCY_COMPONENT]: 'other', [ATTR_CONCURRENCY_LIMIT_NAME]: 'busy_moved' };
  setTelemetryState(EXPORTING);
  metrics.setGlobalMeterProvider(a.meterProvider);
  const limit = meteredLimit(new Semaphore(2), { component: 'other', limitName: 'busy_moved' });
  const hold = deferred();
  const running = limit.run(() => hold.promise);
  expect(gauges(await collectMetrics(a.reader), busy)).toMatchObject({ limit: 2, active: 1, available: 1 });
  metrics.disable();
  metrics.setGlobalMeterProvider(b.meterProvider);
  limit.state(); // its next use: B reports it
  const idle = { limit: 2, active: 0, available: 2, queued: 0, oldest: 0 };
  expect(gauges(await collectMetrics(a.reader), busy)).toEqual(idle);
  expect(gauges(await collectMetrics(b.reader), busy)).toMatchObject({ limit: 2, active: 1, available: 1 });
  expect(gauges(await collectMetrics(a.reader), busy)).toEqual(idle); // and later, still idle
  hold.resolve();
  await running;
});

it('the global provider switched A → B: only B reports a global metered limit (A, read as deltas, reports it idle once, then stops)', async () => {
  const a = createMetricHarness({ temporality: AggregationTemporality.DELTA });
  const b = createMetricHarness({ temporality: AggregationTemporality.DELTA });
  const moved = { [ATTR_CONCURRENCY_COMPONENT]: 'other', [ATTR_CONCURRENCY_LIMIT_NAME]: 'moved' };
  const movedPoints = (m: Awaited<ReturnType<typeof collectMetrics>>) =>
    (m.get(INSTRUMENTS.concurrencyLimit.name)?.dataPoints ?? []).filter(
      (p) => p.attributes[ATTR_CONCURRENCY_LIMIT_NAME] === 'moved',
    );
  setTelemetryState(EXPORTING);
  metrics.setGlobalMeterProvider(a.meterProvider);
  const limit = meteredLimit(new Semaphore(2), { component: 'other', limitName: 'moved' });
  await limit.run(() => 1);
  expect(gaugeValue(await collectMetrics(a.reader), INSTRUMENTS.concurrencyLimit.name, moved)).toBe(2);
  metrics.disable();
  metrics.setGlobalMeterProvider(b.meterProvider);
  await limit.run(() => 1);
  expect(gaugeValue(await collectMetrics(b.reader), INSTRUMENTS.concurrencyLimit.name, moved)).toBe(2);
  const last = await collectMetrics(a.reader);
  expect(movedPoints(last)).toHaveLength(1);
  expect(gaugeValue(last, INSTRUMENTS.concurrencyActive.name, moved)).toBe(0);
  expect(movedPoints(await collectMetrics(a.reader))).toHaveLength(0);
});

describe('an acquire()/release() limit judged by its own counts: a slot given back passes to a queued call', () => {
  /** An async pool whose acquire() awaits more after the grant: the grant reaches its caller 10 ticks late. */
  class AsyncPool {
    private readonly semaphore = new Semaphore(1);
    async acquire(): Promise<() => void> {
      const [, release] = await this.semaphore.acquire();
      for (let tick = 0; tick < 10; tick++) await null;
      return release;
    }
  }

  // Before the fix, A's caller asking again at once (before B's body started) was counted
  // active: active 2 with limit 1, queue depth 0, and the next call slipped past maxQueued.
  it.each([
    ['withTimeout(Mutex)', () => withTimeout(new Mutex(), 60_000)],
    ['an async pool', () => new AsyncPool()],
    ['countingLimit', () => countingLimit(1)],
  ])('%s: a call asking right after a release waits behind the queued one, and counts so', async (_kind, make) => {
    const { meterProvider, reader } = createMetricHarness();
    const limit = meteredLimit(make(), {
      component: 'other',
      limitName: 'handover',
      capacity: 1,
      maxQueued: 1,
      meterProvider,
    });
    const [a, b, c] = [deferred(), deferred(), deferred()];
    let running = 0;
    const body = (gate: { promise: Promise<void> }) => async () => {
      running++;
      await gate.promise;
      running--;
    };
    const first = limit.run(body(a));
    const second = limit.run(body(b)); // waits: 1 queued (= maxQueued)
    a.resolve();
    await first;
    const third = limit.run(body(c)); // the slot is the second's now: this one waits
    await settle();
    expect(running).toBe(1);
    expect(limit.state()).toMatchObject({ limit: 1, active: 1, available: 0, queued: 1 });
    const m = await collectMetrics(reader);
    const series = { [ATTR_CONCURRENCY_COMPONENT]: 'other', [ATTR_CONCURRENCY_LIMIT_NAME]: 'handover' };
    expect(gaugeValue(m, INSTRUMENTS.concurrencyActive.name, series)).toBe(1);
    expect(gaugeValue(m, INSTRUMENTS.concurrencyQueueDepth.name, series)).toBe(1);
    // One call really waits (= maxQueued): the next is refused.
    await expect(limit.run(() => 'never')).rejects.toBeInstanceOf(AdmissionRejectedError);
    b.resolve();
    c.resolve();
    await Promise.all([second, third]);
    expect(limit.state()).toMatchObject({ active: 0, queued: 0, available: 1, admissionRejected: 1 });
  });

  it('a waiter that left keeps its place in the pool: the slot granted to that place is passed once, and maxQueued still bounds the queue', async () => {
    // Before, the release to the left caller's place and that caller's give-back each counted a
    // pass: one pass stayed counted with nothing in transit, and a third caller was let wait.
    const limit = meteredLimit(countingLimit(1), {
      component: 'other',
      limitName: 'stale_place',
      capacity: 1,
      maxQueued: 2,
    });
    const [holdA, holdE, holdF, holdG] = [deferred(), deferred(), deferred(), deferred()];
    const a = limit.run(() => holdA.promise);
    const leaving = new AbortController();
    const b = capture(limit.run(() => 'never', { signal: leaving.signal }));
    const e = limit.run(() => holdE.promise);
    await settle();
    leaving.abort(new Error('client gone')); // B leaves; its place stays in the pool's queue
    await settle();
    const f = limit.run(() => holdF.promise); // E and F wait: 2 = maxQueued
    holdA.resolve();
    await a;
    await settle(); // A's slot reached B's place, went back, and E holds it
    expect(limit.state()).toMatchObject({ active: 1, queued: 1, available: 0 });
    const g = limit.run(() => holdG.promise); // F and G wait: 2 = maxQueued
    const beyond = capture(limit.run(() => 'never'));
    for (const hold of [holdE, holdF, holdG]) hold.resolve();
    await Promise.all([e, f, g]);
    expect(await beyond).toEqual({ ok: false, error: expect.any(AdmissionRejectedError) });
    expect((await b).ok).toBe(false);
    expect(limit.state()).toMatchObject({
      active: 0,
      queued: 0,
      available: 1,
      admissionRejected: 1,
      admissionCancelled: 1,
    });
  });

  /** A one-slot acquire()/release() metered limit (maxQueued 1), its holder, and a waiter that can be made to leave. */
  function holderAndLeavingWaiter(limitName: string) {
    const limit = meteredLimit(countingLimit(1), { component: 'other', limitName, capacity: 1, maxQueued: 1 });
    const hold = deferred();
    const holder = limit.run(() => hold.promise);
    const leaving = new AbortController();
    const waiter = capture(limit.run(() => 'never', { signal: leaving.signal }));
    return { limit, hold, holder, leaving, waiter };
  }

  it('a waiter aborted at any microtask around the hand-over: the slot ends free, nothing counted as passed', async () => {
    // Without the fix, an abort landing between the release (the slot counted as passed to this
    // waiter) and the waiter leaving left the pass counted: the idle limit read 0 available.
    for (let ticks = 0; ticks < 14; ticks++) {
      const { limit, hold, holder: first, leaving, waiter } = holderAndLeavingWaiter('abort_at_handover');
      await settle();
      hold.resolve();
      for (let tick = 0; tick < ticks; tick++) await null;
      leaving.abort(new Error('client gone'));
      await first;
      await settle();
      // Early aborts cancel the wait; late ones find the body already run.
      const ran = (await waiter).ok;
      expect({ ticks, state: limit.state() }).toMatchObject({
        ticks,
        state: { active: 0, queued: 0, available: 1, admissionCancelled: ran ? 0 : 1 },
      });
      // The next caller gets the slot at once.
      expect(await limit.run(() => 'next')).toBe('next');
    }
  });

  it("a call that found a free slot but got it behind a left waiter's place: no pass stays counted, maxQueued holds", async () => {
    // Without the fix, the slot passed on from the left waiter's place reached a call that had
    // been counted active, and stayed counted as passed: a caller beyond maxQueued was let wait.
    // The two calls arrive at every microtask offset after the holder's body ended.
    for (let ticks = 0; ticks < 10; ticks++) {
      const { limit, hold: holdA, holder: a, leaving, waiter: b } = holderAndLeavingWaiter('behind_left_place');
      await settle();
      leaving.abort(new Error('client gone')); // its place stays in the pool's queue
      await settle();
      holdA.resolve();
      for (let tick = 0; tick < ticks; tick++) await null;
      const hold = deferred();
      let running = 0;
      let waiting = 2;
      const next = () =>
        capture(
          limit.run(async () => {
            waiting--;
            running++;
            await hold.promise;
          }),
        ).then((settled) => {
          if (!settled.ok) waiting--;
          return settled;
        });
      const later = [next(), next()];
      await settle();
      expect({ ticks, state: limit.state() }).toMatchObject({ ticks, state: { active: running, queued: waiting } });
      // One call really waits (= maxQueued): the next is refused.
      const beyond = waiting === 1 ? capture(limit.run(() => 'never')) : undefined;
      hold.resolve();
      await Promise.all([a, ...later]);
      if (beyond !== undefined) expect((await beyond).ok ? 'admitted' : 'refused').toBe('refused');
      expect((await b).ok).toBe(false);
      expect(limit.state()).toMatchObject({ active: 0, queued: 0, available: 1 });
    }
  });

  it('the granted call was still counted as queued: the next caller is not refused for it', async () => {
    const limit = meteredLimit(new AsyncPool(), {
      component: 'other',
      limitName: 'handover_admit',
      capacity: 1,
      maxQueued: 1,
    });
    const [a, b, c] = [deferred(), deferred(), deferred()];
    const first = limit.run(() => a.promise);
    const second = limit.run(() => b.promise);
    a.resolve();
    await first; // the second call was granted the slot; its body has not started yet
    expect(limit.state()).toMatchObject({ active: 0, queued: 1, available: 0 });
    const third = capture(limit.run(() => c.promise)); // the only call really waiting: admitted
    b.resolve();
    c.resolve();
    await second;
    expect(await third).toEqual({ ok: true, value: undefined });
    expect(limit.state().admissionRejected).toBe(0);
  });
});

it('a Semaphore whose value setValue() took below 0 never exports a limit below the units held through it', async () => {
  const semaphore = new Semaphore(4);
  const limit = meteredLimit(semaphore, { component: 'other', limitName: 'shrunk' });
  const holds = Array.from({ length: 4 }, () => deferred());
  const running = holds.map((hold) => limit.run(() => hold.promise));
  await settle();
  semaphore.setValue(-2);
  expect(limit.state()).toMatchObject({ limit: 4, active: 4, available: 0 });
  holds[0]?.resolve();
  await running[0];
  expect(limit.state()).toMatchObject({ limit: 3, active: 3, available: 0 });
  for (const hold of holds) hold.resolve();
  await Promise.all(running);
  expect(limit.state()).toMatchObject({ limit: 2, active: 0, available: 2 });
});

it('a limit replaced in the export while still in use keeps adding its refusals to the exported total', async () => {
  const { meterProvider, reader } = createMetricHarness();
  const options = { component: 'other', limitName: 'per_job', maxQueued: 0, meterProvider } as const;
  const refuse = (limit: ReturnType<typeof meteredLimit>) => capture(limit.run(() => 'never'));
  const job1 = meteredLimit(new Semaphore(1), options);
  const hold1 = deferred();
  const running1 = job1.run(() => hold1.promise);
  await refuse(job1); // 1
  const job2 = meteredLimit(new Semaphore(1), options); // takes job 1's place in the export
  const hold2 = deferred();
  const running2 = job2.run(() => hold2.promise);
  await refuse(job2); // 2
  await refuse(job1); // 3: job 1 is still in use
  await refuse(job1); // 4
  const series = { [ATTR_CONCURRENCY_COMPONENT]: 'other', [ATTR_CONCURRENCY_LIMIT_NAME]: 'per_job' };
  expect(counterValue(await collectMetrics(reader), INSTRUMENTS.admissionRejected.name, series)).toBe(4);
  // Once closed, a limit adds nothing more.
  job1.close();
  await refuse(job1);
  expect(counterValue(await collectMetrics(reader), INSTRUMENTS.admissionRejected.name, series)).toBe(4);
  hold1.resolve();
  hold2.resolve();
  await Promise.all([running1, running2]);
});

it('an admission deadline keeps the process alive until it ends the wait (a real child process)', async () => {
  // Nothing else keeps this process alive: with an unref'd timer it exited at once, code 13
  // (an unsettled top-level await), and the caller never heard of the deadline.
  const script = `
    import { meteredLimit } from '@gym/operations';
    const stuck = { acquire: () => new Promise(() => {}) };
    const limit = meteredLimit(stuck, { component: 'other', limitName: 'stuck', capacity: 1, admissionTimeoutMs: 200 });
    limit.run(() => 'never'); // found the slot free (no deadline), and never gets it
    const error = await limit.run(() => 'never').catch((e) => e); // waits: the deadline ends it
    console.log(error.name);
  `;
  // The timeout is a failure guard: a loaded machine starts a child slowly.
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    timeout: 60_000,
  });
  expect(stdout.trim()).toBe('AdmissionTimeoutError');
}, 70_000);

it('serverName is bounded like limit names: beyond 64 distinct ones a limit works but is not exported', async () => {
  const diag = captureDiag();
  const { meterProvider, reader } = createMetricHarness();
  const make = (serverName: string) =>
    meteredLimit(new Semaphore(1), { component: 'other', limitName: 'per_server', serverName, meterProvider });
  const limits = Array.from({ length: MAX_LIMIT_NAMES }, (_, i) => make(`server-${i}`));
  const refused = make('one-too-many');
  expect(await refused.run(() => 'works')).toBe('works');
  const m = await collectMetrics(reader);
  const servers = (m.get(INSTRUMENTS.concurrencyLimit.name)?.dataPoints ?? []).map(
    (p) => p.attributes[ATTR_SERVER_NAME],
  );
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
    const point = histogramPoint(await collectMetrics(reader), INSTRUMENTS.operationQueueDuration.name, {
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

describe('gym.concurrency.oldest_wait_ms: the age of the oldest call waiting now, 0 when nobody waits', () => {
  it.each(KINDS)('%s', async (kind, make) => {
    const clock = new FakeClock();
    try {
      const { meterProvider, reader } = createMetricHarness();
      const limit = meteredLimit(make(1), {
        component: 'other',
        limitName: 'oldest',
        capacity: capacityOf(kind, 1),
        meterProvider,
      });
      const oldest = async () => gaugeValue(await collectMetrics(reader), INSTRUMENTS.concurrencyOldestWait.name);
      const holds = [deferred(), deferred(), deferred()] as const;
      const first = limit.run(() => holds[0].promise);
      await settle();
      expect(await oldest()).toBe(0);
      clock.time = 10;
      const second = limit.run(() => holds[1].promise); // waits from 10
      clock.time = 40;
      // Measured too: its wait starts at the recorder's own clock reading.
      const third = resourcesOperation(limit, { ...OPTIONS, meterProvider }, () => holds[2].promise); // from 40
      clock.time = 250;
      expect(await oldest()).toBe(240);
      expect(await oldest()).toBe(240); // read at collection, not consumed
      holds[0].resolve();
      await first;
      await settle();
      expect(await oldest()).toBe(210); // the second holds; the third waits since 40
      holds[1].resolve();
      await second;
      await settle();
      expect(await oldest()).toBe(0);
      holds[2].resolve();
      await third;
      expect(await oldest()).toBe(0);
    } finally {
      clock.restore();
    }
  });
});

it('oldest_wait_ms: waits that end out of order (aborted, timed out) leave the oldest one still waiting', async () => {
  const clock = new FakeClock();
  try {
    const { meterProvider, reader } = createMetricHarness();
    const limit = meteredLimit(new Semaphore(1), { component: 'other', limitName: 'out_of_order', meterProvider });
    const oldest = async () => gaugeValue(await collectMetrics(reader), INSTRUMENTS.concurrencyOldestWait.name);
    const hold = deferred();
    const holder = limit.run(() => hold.promise);
    await settle();
    const aborts = [new AbortController(), new AbortController(), new AbortController()];
    const waiters = aborts.map((controller, i) => {
      clock.time = 10 * (i + 1); // waits from 10, 20, 30
      return capture(limit.run(() => 'ran', { signal: controller.signal }));
    });
    clock.time = 100;
    aborts[1]?.abort(new Error('gone')); // the middle one leaves
    await settle();
    expect(await oldest()).toBe(90);
    aborts[0]?.abort(new Error('gone')); // then the oldest: the one from 30 is the oldest now
    await settle();
    expect(await oldest()).toBe(70);
    hold.resolve();
    await holder;
    expect((await Promise.all(waiters)).map((r) => r.ok)).toEqual([false, false, true]);
    expect(await oldest()).toBe(0);
  } finally {
    clock.restore();
  }
});

describe('an admission deadline costs a call that finds a free slot nothing: no timer, until a call waits', () => {
  it.each(KINDS)('%s', async (kind, make) => {
    jest.useFakeTimers();
    const limit = meteredLimit(make(1), {
      component: 'other',
      limitName: 'deadline_free',
      capacity: capacityOf(kind, 1),
      admissionTimeoutMs: 1000,
    });
    const hold = deferred();
    const holder = limit.run(() => hold.promise);
    expect(jest.getTimerCount()).toBe(0); // not even for a moment
    await jest.advanceTimersByTimeAsync(0);
    expect(jest.getTimerCount()).toBe(0);
    const waiter = capture(limit.run(() => 'never'));
    await jest.advanceTimersByTimeAsync(0);
    expect(jest.getTimerCount()).toBe(1);
    await jest.advanceTimersByTimeAsync(1000);
    const timedOut = await waiter;
    expect(timedOut.ok === false && timedOut.error instanceof AdmissionTimeoutError).toBe(true);
    expect(limit.state()).toMatchObject({ admissionTimeouts: 1, queued: 0, active: 1 });
    hold.resolve();
    await holder;
  });
});

it('a Semaphore held by a direct caller: given its capacity, the limit is exported whole (not 0)', async () => {
  const { meterProvider, reader } = createMetricHarness();
  const semaphore = new Semaphore(1);
  const hold = deferred();
  const direct = semaphore.runExclusive(() => hold.promise);
  const limit = meteredLimit(semaphore, { component: 'other', limitName: 'direct_held', capacity: 1, meterProvider });
  const waiting = [1, 2, 3].map(() => limit.run(() => 'ran'));
  await settle();
  expect(gauges(await collectMetrics(reader))).toMatchObject({ limit: 1, active: 0, available: 0, queued: 3 });
  hold.resolve();
  await direct;
  expect(await Promise.all(waiting)).toEqual(['ran', 'ran', 'ran']);
  expect(gauges(await collectMetrics(reader))).toEqual({ limit: 1, active: 0, available: 1, queued: 0, oldest: 0 });
});

describe('a limit that is no limiter is a TypeError naming the option and the accepted kinds, whatever the telemetry state', () => {
  it.each([
    ['off', undefined],
    ['exporting', EXPORTING],
  ])('telemetry %s', async (_state, state) => {
    if (state !== undefined) setTelemetryState(state);
    for (const limit of [4, 'judges', {}, { acquire: 1 }, () => 'a plain function']) {
      const result = await capture(resourcesOperation(limit as never, OPTIONS, () => 'never'));
      expect(result.ok === false && result.error instanceof TypeError).toBe(true);
      expect(result.ok === false && (result.error as Error).message).toMatch(
        /^resourcesOperation: limit must be an async-mutex Semaphore or Mutex, a p-limit limiter, an object with acquire\(\) \(and release\(\)\), a metered limit, or null for unlimited work; got /,
      );
    }
  });
});
