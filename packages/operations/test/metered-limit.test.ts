// meteredLimit: the seven gym.concurrency.* instruments read back from a real SDK (names, kinds,
// units, attribute sets), summing, capacity per limit kind, and admission control (maxQueued,
// admissionTimeoutMs, aborts) on every limit kind, directly and through resourcesOperation.

import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_SERVER_NAME,
  INSTRUMENTS,
} from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import {
  AdmissionRejectedError,
  AdmissionTimeoutError,
  type MeterableLimit,
  type MeteredLimit,
  type MeteredLimitOptions,
  meteredLimit,
  resourcesOperation,
} from '@gym/operations';
import {
  capture,
  collectMetrics,
  createMetricHarness,
  deferred,
  histogramCount,
  histogramPoint,
  type PullMetricReader,
  pointsOf,
  sameAttributes,
  settle,
} from '@gym/test-kit';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { metrics, ValueType } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType, type MetricData } from '@opentelemetry/sdk-metrics';
import { Mutex, Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { countingLimit } from './helpers.js';

afterEach(() => {
  jest.useRealTimers();
  setTelemetryState(undefined);
  metrics.disable();
});

/** The value of the point of `name` with exactly `attributes`, or undefined. */
function pointValue(m: Map<string, MetricData>, name: string, attributes: Record<string, string>): number | undefined {
  return pointsOf<number>(m, name).find((p) => sameAttributes(p.attributes, attributes))?.value;
}

/** Every series of one attribute set, by short name. */
async function series(reader: PullMetricReader, attributes: Record<string, string>) {
  const m = await collectMetrics(reader);
  const at = (name: string) => pointValue(m, `gym.concurrency.${name}`, attributes);
  return {
    limit: at('limit'),
    active: at('active'),
    available: at('available'),
    queueDepth: at('queue_depth'),
    timeouts: at('admission_timeouts_total'),
    cancelled: at('admission_cancelled_total'),
    rejected: at('admission_rejected_total'),
  };
}

const ATTRS = (limitName: string, serverName?: string) => ({
  [ATTR_CONCURRENCY_COMPONENT]: 'resources',
  [ATTR_CONCURRENCY_LIMIT_NAME]: limitName,
  ...(serverName === undefined ? {} : { [ATTR_SERVER_NAME]: serverName }),
});

interface Kind {
  name: string;
  /** A limit of 2 slots and the options that go with it. */
  make: () => { limit: MeterableLimit; extra: Partial<MeteredLimitOptions>; isFree: () => boolean };
}

const KINDS: Kind[] = [
  {
    name: 'async-mutex Semaphore',
    make: () => {
      const s = new Semaphore(2);
      return { limit: s, extra: {}, isFree: () => s.getValue() === 2 };
    },
  },
  {
    name: 'p-limit',
    make: () => {
      const l = pLimit(2);
      return { limit: l, extra: {}, isFree: () => l.activeCount + l.pendingCount === 0 };
    },
  },
  {
    name: 'acquire()/release() limit',
    make: () => {
      const c = countingLimit(2);
      return { limit: c, extra: { capacity: 2 }, isFree: () => c.free === 2 };
    },
  },
];

describe('instruments', () => {
  it('exports exactly the eight gym.concurrency.* instruments with their kinds, units, value types and attribute keys', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const limit = meteredLimit(new Semaphore(4), {
      component: 'model',
      limitName: 'upstream_requests',
      serverName: 'policy_model',
      admissionTimeoutMs: 1000,
      meterProvider: provider,
    });
    await limit.run(() => 'done');
    const { resourceMetrics } = await reader.collect();
    const shapes = resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics.map((m) => ({ scope: s.scope.name, m })))
      .filter(({ m }) => m.descriptor.name.startsWith('gym.concurrency.'))
      .map(({ scope, m }) => ({
        scope,
        name: m.descriptor.name,
        kind: m.dataPointType === DataPointType.SUM ? (m.isMonotonic ? 'counter' : 'up-down counter') : 'gauge',
        unit: m.descriptor.unit,
        valueType: m.descriptor.valueType,
        temporality: m.aggregationTemporality,
        keys: m.dataPoints.map((p) => Object.keys(p.attributes).sort()),
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
    const keys = [['nemo.gym.concurrency.component', 'nemo.gym.concurrency.limit_name', 'nemo.gym.server.name']];
    const common = { scope: '@gym/operations', valueType: ValueType.INT, keys };
    expect(shapes).toEqual([
      {
        ...common,
        name: 'gym.concurrency.active',
        kind: 'gauge',
        unit: '{slot}',
        temporality: AggregationTemporality.CUMULATIVE,
      },
      {
        ...common,
        name: 'gym.concurrency.admission_cancelled_total',
        kind: 'counter',
        unit: '{wait}',
        temporality: AggregationTemporality.CUMULATIVE,
      },
      {
        ...common,
        name: 'gym.concurrency.admission_rejected_total',
        kind: 'counter',
        unit: '{wait}',
        temporality: AggregationTemporality.CUMULATIVE,
      },
      {
        ...common,
        name: 'gym.concurrency.admission_timeouts_total',
        kind: 'counter',
        unit: '{wait}',
        temporality: AggregationTemporality.CUMULATIVE,
      },
      {
        ...common,
        name: 'gym.concurrency.available',
        kind: 'gauge',
        unit: '{slot}',
        temporality: AggregationTemporality.CUMULATIVE,
      },
      {
        ...common,
        name: 'gym.concurrency.limit',
        kind: 'gauge',
        unit: '{slot}',
        temporality: AggregationTemporality.CUMULATIVE,
      },
      {
        ...common,
        name: 'gym.concurrency.oldest_wait_ms',
        kind: 'gauge',
        unit: 'ms',
        valueType: ValueType.DOUBLE,
        temporality: AggregationTemporality.CUMULATIVE,
      },
      {
        ...common,
        name: 'gym.concurrency.queue_depth',
        kind: 'gauge',
        unit: '{waiter}',
        temporality: AggregationTemporality.CUMULATIVE,
      },
    ]);
    const concurrencyNames = Object.values(INSTRUMENTS)
      .map((entry) => entry.name)
      .filter((name) => name.startsWith('gym.concurrency.'));
    expect(shapes.map((s) => s.name).sort()).toEqual(concurrencyNames.sort());
    const attributes = { ...ATTRS('upstream_requests', 'policy_model'), [ATTR_CONCURRENCY_COMPONENT]: 'model' };
    expect(await series(reader, attributes)).toEqual({
      limit: 4,
      active: 0,
      available: 4,
      queueDepth: 0,
      timeouts: 0,
      cancelled: 0,
      rejected: 0,
    });
    // The component attribute carries the component given.
    const m = await collectMetrics(reader);
    expect(m.get('gym.concurrency.limit')?.dataPoints[0]?.attributes).toEqual({
      'nemo.gym.concurrency.component': 'model',
      'nemo.gym.concurrency.limit_name': 'upstream_requests',
      'nemo.gym.server.name': 'policy_model',
    });
    // Held to the end: an unreferenced limit stops being reported once a collection frees it.
    expect(limit.state().limit).toBe(4);
  });

  it('without serverName the points carry only component and limit name', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const limit = meteredLimit(pLimit(3), { component: 'resources', limitName: 'tools', meterProvider: provider });
    const m = await collectMetrics(reader);
    expect(m.get('gym.concurrency.limit')?.dataPoints.map((p) => p.attributes)).toEqual([ATTRS('tools')]);
    // Held to the end: an unreferenced limit stops being reported once a collection frees it.
    expect(limit.state().limit).toBe(3);
  });

  it('admission_timeouts_total has no point at all for a limit without admissionTimeoutMs', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const limit = meteredLimit(new Semaphore(1), {
      component: 'resources',
      limitName: 'no_deadline',
      meterProvider: provider,
    });
    await limit.run(() => 1);
    const m = await collectMetrics(reader);
    expect(m.get(INSTRUMENTS.admissionTimeouts.name)?.dataPoints ?? []).toEqual([]);
    expect(pointValue(m, 'gym.concurrency.admission_cancelled_total', ATTRS('no_deadline'))).toBe(0);
    // A second limit of the same attribute set with a deadline brings the point (for the set).
    const withDeadline = meteredLimit(new Semaphore(1), {
      component: 'resources',
      limitName: 'no_deadline',
      admissionTimeoutMs: 50,
      meterProvider: provider,
    });
    expect(pointValue(await collectMetrics(reader), INSTRUMENTS.admissionTimeouts.name, ATTRS('no_deadline'))).toBe(0);
    // Both held to the end: an unreferenced limit stops being reported once a collection frees it.
    expect([limit.state().limit, withDeadline.state().limit]).toEqual([1, 1]);
  });

  it('distinct limiters of one attribute set are summed; another set is its own series', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const options = { component: 'resources', limitName: 'judges', meterProvider: provider } as const;
    const a = meteredLimit(new Semaphore(2), options);
    const b = meteredLimit(pLimit(3), options);
    const c = meteredLimit(new Mutex(), { ...options, serverName: 'judge_server' });
    const hold = deferred();
    const running = [
      a.run(() => hold.promise),
      b.run(() => hold.promise),
      b.run(() => hold.promise),
      c.run(() => hold.promise),
    ];
    await settle();
    // a (2 slots, 1 held) and b (3 slots, 2 held), summed.
    expect(await series(reader, ATTRS('judges'))).toEqual({
      limit: 5,
      active: 3,
      available: 2,
      queueDepth: 0,
      timeouts: undefined,
      cancelled: 0,
      rejected: 0,
    });
    expect(await series(reader, ATTRS('judges', 'judge_server'))).toMatchObject({ limit: 1, active: 1, available: 0 });
    hold.resolve();
    await Promise.all(running);
    expect(await series(reader, ATTRS('judges'))).toMatchObject({ limit: 5, active: 0, available: 5 });
    expect([a, b, c].map((limit) => limit.state().limit)).toEqual([2, 3, 1]);
  });

  it('counts are kept with telemetry off and exported only while exporting', async () => {
    // A delta reader exports only what the callbacks observed in this collection (a cumulative
    // reader of the JS SDK keeps repeating the last value of every attribute set it ever saw).
    const { meterProvider: provider, reader } = createMetricHarness({ temporality: AggregationTemporality.DELTA });
    metrics.setGlobalMeterProvider(provider);
    setTelemetryState({ metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator: false });
    const limit = meteredLimit(new Semaphore(1), { component: 'agent', limitName: 'global_limit', maxQueued: 0 });
    const hold = deferred();
    const running = limit.run(() => hold.promise);
    const refused = await capture(limit.run(() => 'never'));
    expect(refused.ok ? undefined : refused.error).toBeInstanceOf(AdmissionRejectedError);
    expect(limit.state()).toEqual({
      limit: 1,
      active: 1,
      available: 0,
      queued: 0,
      admissionTimeouts: 0,
      admissionCancelled: 0,
      admissionRejected: 1,
    });
    expect((await collectMetrics(reader)).size).toBe(0);

    setTelemetryState({ metricsExporting: true, tracesExporting: false, spanGroups: [], orchestrator: false });
    limit.state(); // its first use while exporting
    const attributes = { [ATTR_CONCURRENCY_COMPONENT]: 'agent', [ATTR_CONCURRENCY_LIMIT_NAME]: 'global_limit' };
    const m = await collectMetrics(reader);
    expect(pointValue(m, 'gym.concurrency.limit', attributes)).toBe(1);
    expect(pointValue(m, 'gym.concurrency.active', attributes)).toBe(1);
    setTelemetryState({ metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator: false });
    // It leaves the export: its idle final state once, then nothing.
    const last = await collectMetrics(reader);
    expect(pointValue(last, 'gym.concurrency.limit', attributes)).toBe(1);
    expect(pointValue(last, 'gym.concurrency.active', attributes)).toBe(0);
    expect((await collectMetrics(reader)).get('gym.concurrency.limit')?.dataPoints ?? []).toEqual([]);
    hold.resolve();
    await running;
    // Held to the end: an unreferenced limit stops being reported once a collection frees it.
    expect(limit.state().active).toBe(0);
  });
});

describe('capacity', () => {
  it('a Semaphore: its free units plus those held through it, read live (setValue shows at once); or the capacity given', () => {
    const semaphore = new Semaphore(3);
    const limit = meteredLimit(semaphore, { component: 'other', limitName: 'sem_default' });
    expect(limit.state().limit).toBe(3);
    semaphore.setValue(2);
    expect(limit.state()).toMatchObject({ limit: 2, active: 0, available: 2 });
    expect(
      meteredLimit(new Semaphore(3), { component: 'other', limitName: 'sem_given', capacity: 5 }).state(),
    ).toMatchObject({ limit: 5, available: 3 });
  });

  it('a Mutex: 1', () => {
    expect(meteredLimit(new Mutex(), { component: 'other', limitName: 'mutex' }).state().limit).toBe(1);
  });

  it('an acquire()/release() limit: the capacity given (required)', () => {
    expect(meteredLimit(countingLimit(7), { component: 'other', limitName: 'pool', capacity: 7 }).state().limit).toBe(
      7,
    );
    // @ts-expect-error: an acquire()/release() object needs its capacity (a type error, and at run time)
    expect(() => meteredLimit(countingLimit(7), { component: 'other', limitName: 'pool' })).toThrow(
      /^meteredLimit: options\.capacity must be a whole number from 1 up \(required for an acquire\(\)\/release\(\) limit\); got undefined$/,
    );
  });

  it('p-limit: follows limiter.concurrency when it is changed at run time, and waiters start when it is raised', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const limiter = pLimit(2);
    const limit = meteredLimit(limiter, { component: 'resources', limitName: 'p_tools', meterProvider: provider });
    const holds = Array.from({ length: 6 }, () => deferred());
    let started = 0;
    const running = holds.map((hold) =>
      limit.run(() => {
        started++;
        return hold.promise;
      }),
    );
    await settle();
    expect(await series(reader, ATTRS('p_tools'))).toMatchObject({ limit: 2, active: 2, available: 0, queueDepth: 4 });

    limiter.concurrency = 4;
    // p-limit itself lets two waiters in at the raise.
    await settle();
    expect(started).toBe(4);
    expect(await series(reader, ATTRS('p_tools'))).toMatchObject({ limit: 4, active: 4, available: 0, queueDepth: 2 });
    holds[0]!.resolve();
    holds[1]!.resolve();
    await settle();
    expect(started).toBe(6);
    expect(await series(reader, ATTRS('p_tools'))).toMatchObject({ limit: 4, active: 4, available: 0, queueDepth: 0 });

    limiter.concurrency = 1;
    // Never below what is held: the 4 running are slots.
    expect(await series(reader, ATTRS('p_tools'))).toMatchObject({ limit: 4, active: 4, available: 0 });
    for (const hold of holds) hold.resolve();
    await Promise.all(running);
    await settle(); // p-limit frees a slot a few microtasks after its call settled
    expect(limit.state()).toMatchObject({ limit: 1, active: 0, queued: 0, available: 1 });
    await settle();
    expect([limiter.activeCount, limiter.pendingCount]).toEqual([0, 0]);
  });
});

describe('programming errors throw at once, naming the value and what is allowed', () => {
  const base = { component: 'resources', limitName: 'valid_name' } as const;
  it.each<[string, unknown, Partial<Record<string, unknown>>, RegExp]>([
    [
      'component outside COMPONENTS',
      new Semaphore(1),
      { component: 'gpu' },
      /^meteredLimit: options\.component must be one of "rollout_driver", "agent", "model", "resources", "sandbox", "other"; got string "gpu"$/,
    ],
    [
      'component as a String object',
      new Semaphore(1),
      { component: new String('agent') },
      /options\.component must be one of .*; got object \(String\)/,
    ],
    [
      'limit name with capitals',
      new Semaphore(1),
      { limitName: 'Upstream' },
      /^meteredLimit: options\.limitName must be a string matching \/\^\[a-z\]\[a-z0-9_\]\{0,63\}\$\/; got string "Upstream"$/,
    ],
    [
      'limit name that is an id',
      new Semaphore(1),
      { limitName: 'req-8f14e45f' },
      /options\.limitName must be a string matching/,
    ],
    ['limit name too long', new Semaphore(1), { limitName: `a${'b'.repeat(64)}` }, /options\.limitName must be/],
    [
      'server name with a space',
      new Semaphore(1),
      { serverName: 'my server' },
      /^meteredLimit: options\.serverName must be undefined or a string matching/,
    ],
    ['capacity 0', new Semaphore(1), { capacity: 0 }, /options\.capacity must be a whole number from 1 up/],
    ['capacity 2.5', new Semaphore(1), { capacity: 2.5 }, /options\.capacity must be a whole number from 1 up/],
    ['capacity for p-limit', pLimit(2), { capacity: 2 }, /options\.capacity must be undefined for a p-limit limiter/],
    [
      'capacity 2 for a Mutex',
      new Mutex(),
      { capacity: 2 },
      /options\.capacity must be undefined or 1 for a Mutex; got number 2/,
    ],
    [
      'admissionTimeoutMs 0',
      new Semaphore(1),
      { admissionTimeoutMs: 0 },
      /options\.admissionTimeoutMs must be undefined or a number of milliseconds above 0/,
    ],
    [
      'admissionTimeoutMs NaN',
      new Semaphore(1),
      { admissionTimeoutMs: Number.NaN },
      /options\.admissionTimeoutMs must be/,
    ],
    [
      'admissionTimeoutMs beyond a timer',
      new Semaphore(1),
      { admissionTimeoutMs: 2 ** 31 },
      /options\.admissionTimeoutMs must be/,
    ],
    [
      'maxQueued -1',
      new Semaphore(1),
      { maxQueued: -1 },
      /options\.maxQueued must be undefined or a whole number from 0 up; got number -1/,
    ],
    ['maxQueued 1.5', new Semaphore(1), { maxQueued: 1.5 }, /options\.maxQueued must be/],
  ])('%s → RangeError', (_name, limit, override, message) => {
    let thrown: unknown;
    try {
      meteredLimit(limit as MeterableLimit, { ...base, ...override } as MeteredLimitOptions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RangeError);
    expect((thrown as Error).message).toMatch(message);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a number', 4],
    ['a plain function', () => {}],
    ['an object without acquire', { release() {} }],
  ])('a limit that is %s → TypeError', (_name, limit) => {
    expect(() => meteredLimit(limit as MeterableLimit, base)).toThrow(TypeError);
  });

  it('a metered limit cannot be wrapped again', () => {
    const once = meteredLimit(new Semaphore(1), base);
    expect(() => meteredLimit(once as unknown as MeterableLimit, base)).toThrow(/already/);
  });

  it('run() with a body that is not a function or a bad signal rejects with a TypeError', async () => {
    const limit = meteredLimit(new Semaphore(1), base);
    await expect(limit.run('x' as never)).rejects.toThrow(TypeError);
    await expect(limit.run(() => 1, { signal: {} as AbortSignal })).rejects.toThrow(TypeError);
  });
});

describe.each(KINDS)('admission on a $name', ({ make }) => {
  function setup(options: Partial<MeteredLimitOptions> = {}) {
    const { meterProvider: provider, reader } = createMetricHarness();
    const { limit: inner, extra, isFree } = make();
    const limit = meteredLimit(inner, {
      component: 'resources',
      limitName: 'admission',
      meterProvider: provider,
      ...extra,
      ...options,
    });
    return { provider, reader, limit, isFree };
  }

  /** Fills both slots; returns a function that frees them. */
  async function fill(limit: MeteredLimit) {
    const hold = deferred();
    const holders = [limit.run(() => hold.promise), limit.run(() => hold.promise)];
    await settle();
    return async () => {
      hold.resolve();
      await Promise.all(holders);
    };
  }

  it('maxQueued: a call finding maxQueued waiters is refused at once with AdmissionRejectedError, never holding a slot', async () => {
    const { limit, reader, isFree } = setup({ maxQueued: 1 });
    const free = await fill(limit);
    const waiting = capture(limit.run(() => 'waited'));
    await settle();
    let ran = false;
    const refused = await capture(
      limit.run(() => {
        ran = true;
      }),
    );
    expect(ran).toBe(false);
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error).toBeInstanceOf(AdmissionRejectedError);
      expect(refused.error).toMatchObject({ code: 'GYM_ADMISSION_REJECTED', limitName: 'admission', maxQueued: 1 });
    }
    expect(limit.state()).toMatchObject({ active: 2, queued: 1, admissionRejected: 1 });
    await free();
    expect(await waiting).toEqual({ ok: true, value: 'waited' });
    await settle(); // p-limit frees a slot a few microtasks after its call settled
    expect(limit.state()).toMatchObject({ active: 0, queued: 0, available: 2, admissionRejected: 1 });
    expect(await series(reader, ATTRS('admission'))).toMatchObject({ rejected: 1, cancelled: 0, timeouts: undefined });
    await settle();
    expect(isFree()).toBe(true);
  });

  it('maxQueued 0: nothing ever waits, but a free slot is always taken', async () => {
    const { limit } = setup({ maxQueued: 0 });
    expect(await limit.run(() => 'free slot')).toBe('free slot');
    const free = await fill(limit);
    const refused = await capture(limit.run(() => 'never'));
    expect(refused.ok ? undefined : refused.error).toBeInstanceOf(AdmissionRejectedError);
    await free();
    expect(limit.state()).toMatchObject({ active: 0, queued: 0, admissionRejected: 1 });
  });

  it('admissionTimeoutMs: a wait that runs out rejects with AdmissionTimeoutError, counts as a timeout (not cancelled), never holds a slot', async () => {
    jest.useFakeTimers();
    const { limit, reader, isFree } = setup({ admissionTimeoutMs: 100 });
    const free = await fill(limit);
    let ran = false;
    const timedOut = capture(
      limit.run(() => {
        ran = true;
      }),
    );
    await jest.advanceTimersByTimeAsync(99);
    expect(limit.state().queued).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    const result = await timedOut;
    expect(ran).toBe(false);
    expect(result.ok ? undefined : result.error).toBeInstanceOf(AdmissionTimeoutError);
    expect(result.ok ? undefined : result.error).toMatchObject({ code: 'GYM_ADMISSION_TIMEOUT', timeoutMs: 100 });
    expect(limit.state()).toMatchObject({ active: 2, queued: 0, admissionTimeouts: 1, admissionCancelled: 0 });
    // A wait that is granted in time is not touched by its deadline.
    const inTime = capture(limit.run(() => 'in time'));
    await jest.advanceTimersByTimeAsync(50);
    await free();
    await jest.advanceTimersByTimeAsync(200);
    expect(await inTime).toEqual({ ok: true, value: 'in time' });
    expect(await series(reader, ATTRS('admission'))).toMatchObject({
      timeouts: 1,
      cancelled: 0,
      rejected: 0,
      queueDepth: 0,
    });
    expect(jest.getTimerCount()).toBe(0);
    expect(isFree()).toBe(true);
  });

  it('an abort while waiting rejects with the reason and counts as cancelled', async () => {
    const { limit, reader, isFree } = setup({ admissionTimeoutMs: 60_000, maxQueued: 10 });
    const free = await fill(limit);
    const controller = new AbortController();
    let ran = false;
    const aborted = capture(
      limit.run(
        () => {
          ran = true;
        },
        { signal: controller.signal },
      ),
    );
    await settle();
    const reason = new Error('caller left');
    controller.abort(reason);
    expect(await aborted).toEqual({ ok: false, error: reason });
    expect(ran).toBe(false);
    expect(limit.state()).toMatchObject({ queued: 0, admissionCancelled: 1, admissionTimeouts: 0 });
    await free();
    expect(await series(reader, ATTRS('admission'))).toMatchObject({
      cancelled: 1,
      timeouts: 0,
      rejected: 0,
      active: 0,
    });
    await settle();
    expect(isFree()).toBe(true);
  });

  it('in resourcesOperation: timed-out and aborted waits record their queue wait, a refusal none; no duration point', async () => {
    jest.useFakeTimers();
    const { provider, reader, limit, isFree } = setup({ admissionTimeoutMs: 100, maxQueued: 2 });
    const options = { operation: 'judge', executor: 'inline', meterProvider: provider } as const;
    const hold = deferred();
    const holders = [
      resourcesOperation(limit, options, () => hold.promise),
      resourcesOperation(limit, options, () => hold.promise),
    ];
    await jest.advanceTimersByTimeAsync(0);
    const controller = new AbortController();
    const timedOut = capture(resourcesOperation(limit, options, () => 'never'));
    const aborted = capture(resourcesOperation(limit, { ...options, signal: controller.signal }, () => 'never'));
    await jest.advanceTimersByTimeAsync(0);
    const refused = await capture(resourcesOperation(limit, options, () => 'never'));
    controller.abort(new Error('gone'));
    await jest.advanceTimersByTimeAsync(100);
    expect((await timedOut).ok ? undefined : ((await timedOut) as { error: unknown }).error).toBeInstanceOf(
      AdmissionTimeoutError,
    );
    expect((await aborted).ok).toBe(false);
    expect(refused.ok ? undefined : refused.error).toBeInstanceOf(AdmissionRejectedError);
    hold.resolve();
    await jest.advanceTimersByTimeAsync(0);
    await Promise.all(holders);
    const m = await collectMetrics(reader);
    const serie = { [ATTR_OPERATION]: 'judge', [ATTR_EXECUTOR]: 'inline' };
    // The refusal never waited: no queue point. The timed-out wait recorded the 100 ms it waited.
    expect(histogramPoint(m, INSTRUMENTS.operationQueueDuration.name, serie).count).toBe(4);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(2); // only the two holders ran
    expect(limit.state()).toMatchObject({
      active: 0,
      queued: 0,
      admissionTimeouts: 1,
      admissionCancelled: 1,
      admissionRejected: 1,
    });
    await jest.advanceTimersByTimeAsync(0);
    expect(isFree()).toBe(true);
  });
});

describe('a Mutex', () => {
  it('one at a time; waiters counted; an abort counted as cancelled', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const mutex = new Mutex();
    const limit = meteredLimit(mutex, { component: 'sandbox', limitName: 'sandbox_lock', meterProvider: provider });
    const hold = deferred();
    const first = limit.run(() => hold.promise);
    const controller = new AbortController();
    const second = capture(limit.run(() => 'second', { signal: controller.signal }));
    const third = limit.run(() => 'third');
    await settle();
    expect(
      await series(reader, { [ATTR_CONCURRENCY_COMPONENT]: 'sandbox', [ATTR_CONCURRENCY_LIMIT_NAME]: 'sandbox_lock' }),
    ).toMatchObject({
      limit: 1,
      active: 1,
      available: 0,
      queueDepth: 2,
    });
    controller.abort();
    await second;
    hold.resolve();
    await first;
    expect(await third).toBe('third');
    expect(limit.state()).toEqual({
      limit: 1,
      active: 0,
      available: 1,
      queued: 0,
      admissionTimeouts: 0,
      admissionCancelled: 1,
      admissionRejected: 0,
    });
    expect(mutex.isLocked()).toBe(false);
  });
});

it('the limit itself and resourcesOperation share one line: the metered and the direct users of a semaphore wait in order', async () => {
  const semaphore = new Semaphore(1);
  const limit = meteredLimit(semaphore, { component: 'resources', limitName: 'shared_line' });
  const log: string[] = [];
  const hold = deferred();
  const first = limit.run(() => hold.promise);
  const direct = resourcesOperation(semaphore, { operation: 'tool', executor: 'inline' }, () => log.push('direct'));
  const metered = limit.run(() => log.push('metered'));
  await settle();
  hold.resolve();
  await Promise.all([first, direct, metered]);
  expect(log).toEqual(['direct', 'metered']);
  expect(semaphore.getValue()).toBe(1);
});

describe('p-limit drops waiting calls (clearQueue() with rejectOnClear)', () => {
  it('a call that found a free slot behind a waiting one, dropped before p-limit started it, leaves the counts', async () => {
    const limiter = pLimit({ concurrency: 1, rejectOnClear: true });
    const limit = meteredLimit(limiter, { component: 'other', limitName: 'cleared_free' });
    const hold = deferred();
    const holder = limit.run(() => hold.promise);
    const waiter = capture(limiter(() => 'direct'));
    limiter.concurrency = 3; // p-limit starts its waiter in a microtask: a slot is free meanwhile
    const behind = capture(limit.run(() => 'never'));
    limiter.clearQueue();
    expect((await behind).ok).toBe(false);
    expect(limit.state()).toMatchObject({ active: 1, queued: 0 });
    hold.resolve();
    await holder;
    await waiter;
    expect(limit.state()).toMatchObject({ active: 0, queued: 0 });
  });

  it('a measured call on a plain limiter that found a free slot behind a waiting one, then dropped, leaves the queued count', async () => {
    const { meterProvider, reader } = createMetricHarness();
    const limiter = pLimit({ concurrency: 1, rejectOnClear: true });
    const options = { operation: 'tool', executor: 'inline', meterProvider } as const;
    const hold = deferred();
    const holder = resourcesOperation(limiter, options, () => hold.promise);
    const waiter = capture(limiter(() => 'direct'));
    limiter.concurrency = 3; // p-limit starts its waiter in a microtask: a slot is free meanwhile
    const behind = capture(resourcesOperation(limiter, options, () => 'never'));
    limiter.clearQueue();
    expect((await behind).ok).toBe(false);
    hold.resolve();
    await holder;
    await waiter;
    const m = await collectMetrics(reader);
    expect(pointsOf(m, 'gym.resources.operation.queued').map((p) => p.value)).toEqual([0]);
    expect(histogramCount(m, INSTRUMENTS.operationQueueDuration.name)).toBe(2);
  });

  it('a dropped call leaves the queued counts, records its wait and never runs; a call that found a free slot runs', async () => {
    const { meterProvider, reader } = createMetricHarness();
    const limiter = pLimit({ concurrency: 1, rejectOnClear: true });
    const limit = meteredLimit(limiter, { component: 'other', limitName: 'cleared', meterProvider });
    const options = { operation: 'tool', executor: 'inline', meterProvider } as const;
    const hold = deferred();
    const holder = resourcesOperation(limit, options, () => hold.promise.then(() => 'held'));
    let ran = 0;
    const dropped = [
      capture(resourcesOperation(limit, options, () => ran++)),
      capture(resourcesOperation(limiter, options, () => ran++)),
    ];
    await settle();
    expect(limit.state()).toMatchObject({ active: 1, queued: 1 });
    limiter.clearQueue();
    for (const settled of await Promise.all(dropped)) expect(settled.ok).toBe(false);
    expect(limit.state()).toMatchObject({ active: 1, queued: 0 });
    hold.resolve();
    expect(await holder).toBe('held');
    expect(ran).toBe(0);
    const m = await collectMetrics(reader);
    expect(histogramCount(m, INSTRUMENTS.operationQueueDuration.name)).toBe(3);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1);
    expect(pointsOf(m, 'gym.resources.operation.queued').map((p) => p.value)).toEqual([0]);
    expect(limit.state()).toMatchObject({ active: 0, queued: 0 });
  });

  it('without rejectOnClear p-limit never settles a dropped call, so it stays counted as queued (README)', async () => {
    const { meterProvider, reader } = createMetricHarness();
    const limiter = pLimit(1);
    const options = { operation: 'tool', executor: 'inline', meterProvider } as const;
    const hold = deferred();
    const holder = resourcesOperation(limiter, options, () => hold.promise);
    let ran = false;
    void resourcesOperation(limiter, options, () => {
      ran = true;
    });
    await settle();
    limiter.clearQueue();
    hold.resolve();
    await holder;
    await settle();
    expect(ran).toBe(false);
    expect([limiter.activeCount, limiter.pendingCount]).toEqual([0, 0]);
    const m = await collectMetrics(reader);
    expect(pointsOf(m, 'gym.resources.operation.queued').map((p) => p.value)).toEqual([1]);
  });
});
