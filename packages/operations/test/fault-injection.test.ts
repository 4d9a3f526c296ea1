// Fault injection: telemetry never breaks the program it observes. A meter whose instruments
// throw, a meter that cannot create instruments, a provider that cannot hand out a meter and an
// exporter that throws: in every case the body's result and error reach the caller unchanged,
// the limit is released, the live counts stay right, and the failure is logged once via diag.

import { getEventListeners } from 'node:events';
import { ATTR_EXECUTOR, ATTR_OPERATION, ATTR_OPERATION_OUTCOME, INSTRUMENTS } from '@gym/constants';
import { meteredLimit, type OperationLimit, resourcesOperation } from '@gym/operations';
import {
  capture,
  captureDiag,
  collectMetrics,
  counterValue,
  createMetricHarness,
  type DiagCapture,
  deferred,
  histogramPoint,
  settle,
  waitFor,
} from '@gym/test-kit';
import { afterAll, afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { Meter, MeterProvider } from '@opentelemetry/api';
import {
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  MeterProvider as SdkMeterProvider,
} from '@opentelemetry/sdk-metrics';
import { Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { countingLimit, providerOf } from './helpers.js';
import { KINDS } from './kinds.js';

const SERIES = { [ATTR_OPERATION]: 'tool', [ATTR_EXECUTOR]: 'thread' };
const OPTIONS = { operation: 'tool', executor: 'thread' } as const;

let diagnostics: DiagCapture;
beforeEach(() => {
  diagnostics = captureDiag();
});
afterEach(() => diagnostics.stop());
/** The warning and error messages of the running test. */
const warnings = (): string[] => diagnostics.atLeast('warn').map((entry) => entry.message);

/** A real SDK meter whose histograms throw on every record (observable counters stay real). */
function meterWithThrowingHistograms(meter: Meter): Meter {
  return new Proxy(meter, {
    get(target, key, receiver) {
      if (key === 'createHistogram') {
        return () => ({
          record() {
            throw new Error('histogram exploded');
          },
        });
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('a meter or exporter that throws', () => {
  it('histogram.record throws: result and error unchanged, limit released, live counts right, logged once', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const meter = meterWithThrowingHistograms(provider.getMeter('faulty'));
    const semaphore = new Semaphore(1);
    const options = { ...OPTIONS, meterProvider: providerOf(meter) };

    const hold = deferred();
    const first = resourcesOperation(semaphore, options, () => hold.promise.then(() => 'value'));
    const error = new Error('body failed');
    const second = capture(
      resourcesOperation(semaphore, options, () => {
        throw error;
      }),
    );
    await settle();
    let m = await collectMetrics(reader);
    expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(1);
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(1);
    hold.resolve();
    expect(await first).toBe('value');
    expect(await second).toEqual({ ok: false, error });
    const third = await capture(
      resourcesOperation(pLimit(1), { ...options, signal: AbortSignal.abort('gone') }, () => 'never'),
    );
    expect(third).toEqual({ ok: false, error: 'gone' });

    expect(semaphore.getValue()).toBe(1);
    m = await collectMetrics(reader);
    expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(0);
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
    expect(warnings().filter((w) => w.includes('recording'))).toHaveLength(1);
    expect(warnings()[0]).toMatch(/@gym\/operations: recording gym\.resources\.operation\.\w+ failed/);
  });

  it('creating instruments throws: operations run unmeasured, limit released, logged once', async () => {
    const broken = new Proxy({} as Meter, {
      get() {
        return () => {
          throw new Error('no instruments today');
        };
      },
    });
    const semaphore = new Semaphore(2);
    const error = new Error('body failed');
    for (let i = 0; i < 3; i++) {
      expect(await resourcesOperation(semaphore, { ...OPTIONS, meterProvider: providerOf(broken) }, () => i)).toBe(i);
      expect(
        await capture(
          resourcesOperation(semaphore, { ...OPTIONS, meterProvider: providerOf(broken) }, () => {
            throw error;
          }),
        ),
      ).toEqual({ ok: false, error });
    }
    expect(semaphore.getValue()).toBe(2);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatch(
      /^@gym\/operations: creating the operation instruments failed; .*no instruments today/,
    );
  });

  it('the meter provider throws from getMeter(): operations run unmeasured, logged once', async () => {
    const provider: MeterProvider = {
      getMeter() {
        throw new Error('provider is shut down hard');
      },
    };
    const limit = pLimit(1);
    expect(await resourcesOperation(limit, { ...OPTIONS, meterProvider: provider }, () => 'a')).toBe('a');
    expect(await resourcesOperation(limit, { ...OPTIONS, meterProvider: provider }, () => 'b')).toBe('b');
    expect(limit.activeCount + limit.pendingCount).toBe(0);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatch(/^@gym\/operations: getting a meter failed; .*provider is shut down hard/);
  });

  it('an exporter that throws while exporting: operations are unaffected', async () => {
    const exporter: PushMetricExporter = {
      export() {
        throw new Error('collector unreachable');
      },
      async forceFlush() {},
      async shutdown() {},
    };
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new SdkMeterProvider({ readers: [reader] });
    const semaphore = new Semaphore(1);
    try {
      const results = await Promise.all(
        [1, 2, 3].map((i) =>
          resourcesOperation(semaphore, { ...OPTIONS, meterProvider: provider }, async () => {
            await reader.forceFlush().catch(() => {});
            return i;
          }),
        ),
      );
      expect(results).toEqual([1, 2, 3]);
      expect(semaphore.getValue()).toBe(1);
    } finally {
      await provider.shutdown().catch(() => {});
    }
  });
});

it('a limit look-alike that throws when entered: the operation rejects with its error and no count leaks', async () => {
  class BrokenLock {
    acquire(): Promise<() => void> {
      throw new Error('lock state unavailable');
    }
    release() {}
    isLocked(): boolean {
      return false;
    }
  }
  const { meterProvider: provider, reader } = createMetricHarness();
  const settled = await capture(resourcesOperation(new BrokenLock(), { ...OPTIONS, meterProvider: provider }, () => 1));
  expect(settled).toEqual({ ok: false, error: new Error('lock state unavailable') });
  const m = await collectMetrics(reader);
  expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(0);
  expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
});

it('a limit whose acquire() throws while raced against a signal and a deadline: rejects with its error, watches nothing', async () => {
  const pool = {
    acquire(): Promise<() => void> {
      throw new Error('pool closed');
    },
  };
  const limit = meteredLimit(pool, {
    component: 'other',
    limitName: 'closed_pool',
    capacity: 1,
    admissionTimeoutMs: 1000,
  });
  const shutdown = new AbortController();
  const settled = await capture(resourcesOperation(limit, { ...OPTIONS, signal: shutdown.signal }, () => 1));
  expect(settled).toEqual({ ok: false, error: new Error('pool closed') });
  expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  expect(limit.state()).toMatchObject({ active: 0, queued: 0, admissionTimeouts: 0, admissionCancelled: 0 });
});

it('a slot granted after its caller left, whose release throws: reported once through diag, never thrown', async () => {
  const grant = deferred<() => void>();
  const pool = { acquire: () => grant.promise };
  const client = new AbortController();
  const running = capture(resourcesOperation(pool, { ...OPTIONS, signal: client.signal }, () => 1));
  client.abort(new Error('client gone'));
  expect(await running).toEqual({ ok: false, error: new Error('client gone') });
  grant.resolve(() => {
    throw new Error('release exploded');
  });
  await waitFor('the late-release warning', () =>
    warnings().find((message) => message.includes('granted after its caller stopped waiting failed')),
  );
  expect(warnings().filter((message) => message.includes('release exploded'))).toHaveLength(1);
});

it.each([
  ['measured', false],
  ['measured and metered', true],
] as const)(
  'a limit whose release throws (%s): the error reaches the caller, the run is recorded and every count closes',
  async (_name, metered) => {
    const { meterProvider, reader } = createMetricHarness();
    const pool = {
      acquire: async () => () => {
        throw new Error('release broke');
      },
    };
    const limit = metered
      ? meteredLimit(pool, { component: 'resources', limitName: 'breaking', capacity: 1, meterProvider })
      : pool;
    const settled = await capture(resourcesOperation(limit, { ...OPTIONS, meterProvider }, () => 'value'));
    expect(settled).toEqual({ ok: false, error: new Error('release broke') });
    const m = await collectMetrics(reader);
    expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(0);
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
    expect(
      histogramPoint(m, INSTRUMENTS.operationDuration.name, { ...SERIES, [ATTR_OPERATION_OUTCOME]: 'ok' }).count,
    ).toBe(1);
    if (metered)
      expect((limit as ReturnType<typeof meteredLimit>).state()).toMatchObject({ active: 0, queued: 0, available: 1 });
  },
);

it('a fresh SDK still works after the faulty ones (failures are per meter, not global)', async () => {
  const { meterProvider: provider, reader } = createMetricHarness();
  await resourcesOperation(null, { ...OPTIONS, meterProvider: provider }, () => {});
  expect((await collectMetrics(reader)).size).toBe(4);
});

describe('a clock that throws', () => {
  let clockWarnings = 0;

  /** Makes `performance.now()` throw on its `nth` read from now on (1: the first), once. */
  function breakClockAt(nth: number): () => void {
    const real = performance.now.bind(performance);
    let reads = 0;
    Object.defineProperty(performance, 'now', {
      configurable: true,
      writable: true,
      value: () => {
        if (++reads === nth) throw new Error('clock unavailable');
        return real();
      },
    });
    return () => {
      delete (performance as { now?: unknown }).now;
    };
  }

  const LIMITS: [string, () => OperationLimit | null][] = [
    ...KINDS.map((kind): [string, () => OperationLimit] => [kind.name, () => kind.make(1).limit]),
    ['null', () => null],
  ];

  // Reads: 1 asked, 2 held, 3 ended. Before the fix, a failing 1st or 2nd read rejected with the
  // clock's error, skipped the body and leaked counts; on the raced path it kept the slot forever.
  it.each(
    LIMITS.flatMap(([kind, make]) =>
      [1, 2, 3].flatMap((nth) => [[kind, nth, 'no signal', make] as const, [kind, nth, 'a signal', make] as const]),
    ),
  )(
    '%s, read %i throws, %s: the body runs once, its result returns, counts and slots are back to 0',
    async (_kind, nth, how, make) => {
      const { meterProvider, reader } = createMetricHarness();
      const limit = make();
      const signal = how === 'a signal' ? new AbortController().signal : undefined;
      let ran = 0;
      const restore = breakClockAt(nth);
      let result: Awaited<ReturnType<typeof capture>>;
      try {
        result = await capture(
          resourcesOperation(limit, { ...OPTIONS, meterProvider, signal }, async () => {
            ran++;
            return 'done';
          }),
        );
      } finally {
        restore();
      }
      expect(result).toEqual({ ok: true, value: 'done' });
      expect(ran).toBe(1);
      // The limit is free: the next call gets the slot at once.
      expect(await resourcesOperation(limit, { ...OPTIONS, meterProvider, signal }, () => 'next')).toBe('next');
      const m = await collectMetrics(reader);
      expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(0);
      expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
      clockWarnings += warnings().filter((w) => /performance\.now\(\) failed.*clock unavailable/.test(w)).length;
    },
  );

  it('a metered limit keeps admitting after the clock failed while a call was asked', async () => {
    const { meterProvider, reader } = createMetricHarness();
    const limit = meteredLimit(countingLimit(1), {
      component: 'other',
      limitName: 'clock_pool',
      capacity: 1,
      maxQueued: 0,
      meterProvider,
    });
    const restore = breakClockAt(1);
    try {
      expect(await resourcesOperation(limit, { ...OPTIONS, meterProvider }, () => 'first')).toBe('first');
    } finally {
      restore();
    }
    expect(limit.state()).toMatchObject({ active: 0, queued: 0, available: 1, admissionRejected: 0 });
    expect(await resourcesOperation(limit, { ...OPTIONS, meterProvider }, () => 'second')).toBe('second');
    const m = await collectMetrics(reader);
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
    clockWarnings += warnings().filter((w) => w.includes('performance.now() failed')).length;
  });

  // Once-only reporting is per process: the first failure of the clock is said, the others not.
  afterAll(() => expect(clockWarnings).toBe(1));
});
