// Each kind of limit, entered through resourcesOperation: the limit is respected,
// the queue time is what the limit made the operation wait, and an operation that aborts while
// waiting leaves without holding a slot. async-mutex limits are real Semaphore/Mutex instances;
// the `Counted…` subclasses only log the calls they receive, to prove which ones never happen.

import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OUTCOME,
  METRIC_OPERATION_ACTIVE,
  METRIC_OPERATION_DURATION,
  METRIC_OPERATION_QUEUE_DURATION,
  METRIC_OPERATION_QUEUED,
} from '@gym/constants';
import { type OperationLimit, resourcesOperation } from '@gym/operations';
import {
  capture,
  collectMetrics,
  counterValue,
  createMetricHarness,
  deferred,
  histogramCount,
  histogramPoint,
  ManualClock,
  settle,
  waitFor,
} from '@gym/test-kit';
import { describe, expect, it, jest } from '@jest/globals';
import { E_ALREADY_LOCKED, E_TIMEOUT, Mutex, Semaphore, tryAcquire, withTimeout } from 'async-mutex';
import pLimit from 'p-limit';
import { AsyncMutexAdapter } from '../src/async-mutex-adapter.js';
import { adapterFor } from '../src/limit-registry.js';
import { PLimitAdapter } from '../src/p-limit-adapter.js';
import { countingLimit } from './helpers.js';

const SERIES = { [ATTR_OPERATION]: 'tool', [ATTR_EXECUTOR]: 'inline' };
const OK = { ...SERIES, [ATTR_OUTCOME]: 'ok' };

/** A real Semaphore that logs every acquire() it receives. */
class CountedSemaphore extends Semaphore {
  acquires = 0;
  override acquire(weight?: number, priority?: number) {
    this.acquires++;
    return super.acquire(weight, priority);
  }
}

/** A real Mutex that logs every acquire() it receives. */
class CountedMutex extends Mutex {
  acquires = 0;
  override acquire(priority?: number) {
    this.acquires++;
    return super.acquire(priority);
  }
}

function setup() {
  const { meterProvider: provider, reader } = createMetricHarness();
  const clock = new ManualClock();
  const options = { operation: 'tool', executor: 'inline', meterProvider: provider, clock: clock.now } as const;
  const log: string[] = [];
  let active = 0;
  let maxActive = 0;
  /** Starts one operation whose body runs until `finish()`. */
  const job = (limit: OperationLimit | null, name: string, signal?: AbortSignal) => {
    const hold = deferred();
    let started = false;
    const settled = capture(
      resourcesOperation(limit, { ...options, signal }, async () => {
        started = true;
        active++;
        maxActive = Math.max(maxActive, active);
        log.push(name);
        try {
          await hold.promise;
        } finally {
          active--;
        }
        return name;
      }),
    );
    return {
      settled,
      finish: async () => {
        hold.resolve();
        await settled;
      },
      get started() {
        return started;
      },
    };
  };
  return { provider, reader, clock, options, log, job, maxActive: () => maxActive };
}

function gateOf(limit: object): AsyncMutexAdapter {
  const adapter = adapterFor(limit);
  if (!(adapter instanceof AsyncMutexAdapter)) throw new Error('not entered through the async-mutex adapter');
  return adapter;
}

function lineOf(limit: object): PLimitAdapter {
  const adapter = adapterFor(limit);
  if (!(adapter instanceof PLimitAdapter)) throw new Error('not entered through the p-limit adapter');
  return adapter;
}

describe('async-mutex Semaphore', () => {
  it('runs at most `value` bodies at once, in FIFO order, and gives every unit back', async () => {
    const { job, log, maxActive } = setup();
    const semaphore = new Semaphore(2);
    const jobs = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => job(semaphore, name));
    await settle();
    expect(log).toEqual(['a', 'b']);
    for (const j of jobs) {
      await j.finish();
      await settle();
    }
    expect(log).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(maxActive()).toBe(2);
    expect(semaphore.getValue()).toBe(2);
    expect(gateOf(semaphore).waiting).toBe(0);
  });

  it('an aborted waiter leaves the line, never calls acquire(), and the next waiter’s queue time is exactly the holder’s run time', async () => {
    const { reader, clock, job, log } = setup();
    const semaphore = new CountedSemaphore(1);
    const a = job(semaphore, 'a');
    const controller = new AbortController();
    const b = job(semaphore, 'b', controller.signal);
    const c = job(semaphore, 'c');
    await settle();
    expect(gateOf(semaphore).waiting).toBe(2);

    clock.time = 10;
    controller.abort(new Error('b gave up'));
    expect(await b.settled).toEqual({ ok: false, error: new Error('b gave up') });
    expect(gateOf(semaphore).waiting).toBe(1);
    expect(semaphore.getValue()).toBe(0); // still a's

    clock.time = 30;
    await a.finish();
    await settle();
    expect(log).toEqual(['a', 'c']);
    expect(b.started).toBe(false);
    // Two bodies ran, two acquisitions: the aborted waiter never asked the semaphore for a unit.
    expect(semaphore.acquires).toBe(2);

    await c.finish();
    expect(semaphore.getValue()).toBe(1);
    const m = await collectMetrics(reader);
    const queue = histogramPoint(m, METRIC_OPERATION_QUEUE_DURATION, SERIES);
    // a waited 0, b gave up after 10, c waited exactly a's 30 ms of running.
    expect(queue).toMatchObject({ count: 3, sum: 40, min: 0, max: 30 });
    expect(histogramPoint(m, METRIC_OPERATION_DURATION, OK)).toMatchObject({ count: 2, max: 30 });
  });

  it('waiters aborted at the head, in the middle and at the tail all leave; the rest keep their order', async () => {
    const { job, log } = setup();
    const semaphore = new Semaphore(1);
    const a = job(semaphore, 'a');
    const controllers = Object.fromEntries(['b', 'c', 'd', 'e'].map((n) => [n, new AbortController()]));
    const waiting = Object.fromEntries(['b', 'c', 'd', 'e'].map((n) => [n, job(semaphore, n, controllers[n]!.signal)]));
    await settle();
    controllers.c!.abort();
    controllers.e!.abort();
    controllers.b!.abort();
    expect(gateOf(semaphore).waiting).toBe(1);
    const f = job(semaphore, 'f');
    await a.finish();
    await settle();
    await waiting.d!.finish();
    await settle();
    await f.finish();
    expect(log).toEqual(['a', 'd', 'f']);
    for (const n of ['b', 'c', 'e']) expect((await waiting[n]!.settled).ok).toBe(false);
    expect(semaphore.getValue()).toBe(1);
    expect(gateOf(semaphore).waiting).toBe(0);
  });

  it('shares the semaphore with direct users (runExclusive) without losing or doubling a unit', async () => {
    const { job, log } = setup();
    const semaphore = new Semaphore(1);
    const a = job(semaphore, 'a');
    const direct = semaphore.runExclusive(async () => {
      log.push('direct');
    });
    const b = job(semaphore, 'b');
    await settle();
    await a.finish();
    await direct;
    await settle();
    await b.finish();
    expect(log).toEqual(['a', 'direct', 'b']);
    expect(semaphore.getValue()).toBe(1);
  });

  it('waits behind someone else’s heavier waiter inside the semaphore, and hands that place on or back', async () => {
    const { job, log } = setup();
    const semaphore = new Semaphore(2);
    const [, releaseX] = await semaphore.acquire(1);
    const heavy = semaphore.acquire(2).then(([, release]) => {
      log.push('heavy');
      return release;
    });
    // One unit is free but the semaphore's own queue has a weight-2 waiter: we must not overtake it.
    const controller = new AbortController();
    const o = job(semaphore, 'o', controller.signal);
    const p = job(semaphore, 'p');
    await settle();
    expect(log).toEqual([]);
    controller.abort(); // o held the gate's place inside the semaphore; p inherits it
    expect((await o.settled).ok).toBe(false);
    releaseX();
    const releaseHeavy = await heavy;
    await settle();
    expect(log).toEqual(['heavy']);
    releaseHeavy();
    await settle();
    expect(log).toEqual(['heavy', 'p']);
    await p.finish();
    expect(o.started).toBe(false);
    expect(semaphore.getValue()).toBe(2);
  });

  it('when the only waiter behind that place aborts, the unit it was granted goes straight back', async () => {
    const { job } = setup();
    const semaphore = new Semaphore(2);
    const [, releaseX] = await semaphore.acquire(1);
    const heavy = semaphore.acquire(2);
    const controller = new AbortController();
    const o = job(semaphore, 'o', controller.signal);
    await settle();
    controller.abort();
    expect((await o.settled).ok).toBe(false);
    releaseX();
    const [, releaseHeavy] = await heavy;
    releaseHeavy();
    await settle();
    expect(o.started).toBe(false);
    expect(semaphore.getValue()).toBe(2);
    expect(semaphore.isLocked()).toBe(false);
  });

  it('setValue() raising the value wakes gate waiters', async () => {
    const { job, log } = setup();
    const semaphore = new Semaphore(1);
    const jobs = ['a', 'b', 'c'].map((n) => job(semaphore, n));
    await settle();
    expect(log).toEqual(['a']);
    semaphore.setValue(semaphore.getValue() + 2);
    await settle();
    expect(log).toEqual(['a', 'b', 'c']);
    for (const j of jobs) await j.finish();
    expect(semaphore.getValue()).toBe(3);
  });

  it('cancel() does not reach operations waiting at the gate (documented): they run when a unit frees', async () => {
    const { job, log } = setup();
    const semaphore = new Semaphore(1);
    const a = job(semaphore, 'a');
    const b = job(semaphore, 'b');
    await settle();
    semaphore.cancel();
    await a.finish();
    await settle();
    await b.finish();
    expect(log).toEqual(['a', 'b']);
    expect((await b.settled).ok).toBe(true);
  });
});

describe('async-mutex Mutex', () => {
  it('one body at a time, FIFO; an aborted waiter never acquires and the mutex is free when the holder leaves', async () => {
    const { reader, job, log, maxActive } = setup();
    const mutex = new CountedMutex();
    const a = job(mutex, 'a');
    const controller = new AbortController();
    const b = job(mutex, 'b', controller.signal);
    const c = job(mutex, 'c');
    await settle();
    controller.abort();
    await a.finish();
    await settle();
    await c.finish();
    expect(log).toEqual(['a', 'c']);
    expect(maxActive()).toBe(1);
    expect(mutex.acquires).toBe(2);
    expect(mutex.isLocked()).toBe(false);
    expect((await b.settled).ok).toBe(false);
    const m = await collectMetrics(reader);
    expect(histogramCount(m, METRIC_OPERATION_QUEUE_DURATION)).toBe(3);
    expect(histogramCount(m, METRIC_OPERATION_DURATION)).toBe(2);
  });
});

describe('async-mutex Mutex shared with direct users', () => {
  it('a direct holder, then a direct waiter between two gate operations: everyone runs once, in order', async () => {
    const { job, log } = setup();
    const mutex = new Mutex();
    const releaseDirect = await mutex.acquire();
    const a = job(mutex, 'a'); // waits for the direct holder (the gate sleeps on waitForUnlock)
    await settle();
    expect(log).toEqual([]);
    releaseDirect();
    await settle();
    expect(log).toEqual(['a']);
    const direct = mutex.runExclusive(() => {
      log.push('direct');
    });
    const b = job(mutex, 'b'); // queued at the gate while a gate operation holds the mutex
    await settle();
    await a.finish();
    await direct;
    await settle();
    await b.finish();
    expect(log).toEqual(['a', 'direct', 'b']);
    expect(mutex.isLocked()).toBe(false);
  });
});

describe('p-limit', () => {
  it('respects the concurrency; the queue time is the time until the limiter starts the body', async () => {
    const { reader, clock, job, log, maxActive } = setup();
    const limit = pLimit(2);
    const jobs = ['a', 'b', 'c'].map((n) => job(limit, n));
    await settle();
    expect(log).toEqual(['a', 'b']);
    clock.time = 25;
    await jobs[0]!.finish();
    await settle();
    expect(log).toEqual(['a', 'b', 'c']);
    await jobs[1]!.finish();
    await jobs[2]!.finish();
    expect(maxActive()).toBe(2);
    expect(limit.activeCount + limit.pendingCount).toBe(0);
    const queue = histogramPoint(await collectMetrics(reader), METRIC_OPERATION_QUEUE_DURATION, SERIES);
    expect(queue).toMatchObject({ count: 3, sum: 25, max: 25 });
  });

  it('abort while queued: rejects at once, never runs, leaves nothing in p-limit; the next waiter starts when the holder ends', async () => {
    const { reader, clock, job, log } = setup();
    const limit = pLimit(1);
    const a = job(limit, 'a');
    const controller = new AbortController();
    const b = job(limit, 'b', controller.signal);
    const c = job(limit, 'c');
    await settle();
    // b (with a signal) waits in this package's line, and c queues behind it: p-limit holds only a.
    expect(limit.activeCount).toBe(1);
    expect(limit.pendingCount).toBe(0);
    expect(lineOf(limit).waiting).toBe(2);

    clock.time = 5;
    const reason = new Error('b gave up');
    controller.abort(reason);
    expect(await b.settled).toEqual({ ok: false, error: reason });
    let m = await collectMetrics(reader);
    expect(counterValue(m, METRIC_OPERATION_QUEUED, SERIES)).toBe(1); // only c is still waiting
    expect(limit.pendingCount).toBe(0);
    expect(lineOf(limit).waiting).toBe(1);

    clock.time = 20;
    await a.finish();
    await settle();
    expect(log).toEqual(['a', 'c']);
    expect(b.started).toBe(false);
    await c.finish();
    expect(limit.activeCount + limit.pendingCount).toBe(0);
    m = await collectMetrics(reader);
    expect(histogramPoint(m, METRIC_OPERATION_QUEUE_DURATION, SERIES)).toMatchObject({
      count: 3,
      sum: 25, // a 0, b 5 (gave up), c 20 = a's run time
      max: 20,
    });
    expect(histogramCount(m, METRIC_OPERATION_DURATION)).toBe(2);
    expect(counterValue(m, METRIC_OPERATION_QUEUED, SERIES)).toBe(0);
    expect(counterValue(m, METRIC_OPERATION_ACTIVE, SERIES)).toBe(0);
  });

  it('clearQueue() reaches only what waits in p-limit itself: bare calls, and unmeasured calls without a signal that found our line empty', async () => {
    const { job, log } = setup();
    const limit = pLimit({ concurrency: 1, rejectOnClear: true });
    const a = job(limit, 'a');
    // Unmeasured, no signal, an empty line: handed to p-limit like a bare call, and queued there.
    const b = capture(resourcesOperation(limit, { operation: 'tool', executor: 'inline' }, () => log.push('b')));
    const c = job(limit, 'c', new AbortController().signal); // a signal: waits in this package's line
    const bare = capture(limit(() => log.push('bare')));
    await settle();
    expect(limit.pendingCount).toBe(2); // b and the bare call
    expect(lineOf(limit).waiting).toBe(1);
    limit.clearQueue();
    for (const cleared of [await b, await bare]) {
      expect(cleared.ok ? undefined : (cleared.error as Error).name).toBe('AbortError');
    }
    await a.finish();
    await settle();
    await c.finish();
    expect(log).toEqual(['a', 'c']);
    await settle();
    expect(limit.activeCount + limit.pendingCount).toBe(0);
  });

  it('work put into the limiter directly is waited for too: the line looks again until a slot is free, and puts nothing into p-limit meanwhile', async () => {
    const { reader, job, log } = setup();
    const limit = pLimit({ concurrency: 1, rejectOnClear: true });
    const direct = deferred();
    const bare = limit(() => direct.promise);
    const controller = new AbortController();
    const a = job(limit, 'a', controller.signal);
    const b = job(limit, 'b'); // measured: waits in the line too
    await settle();
    expect(log).toEqual([]);
    expect(limit.pendingCount).toBe(0); // nothing of ours in p-limit's queue
    expect(lineOf(limit).waiting).toBe(2);
    limit.clearQueue(); // reaches nothing of ours
    expect(counterValue(await collectMetrics(reader), METRIC_OPERATION_QUEUED, SERIES)).toBe(2);
    direct.resolve();
    await bare;
    // Nothing of ours ends to let the line in: it has to look again by itself. Wait for that.
    await waitFor('the line to let a in', () => log.length > 0);
    expect(log).toEqual(['a']);
    await a.finish();
    await settle();
    await b.finish();
    expect(log).toEqual(['a', 'b']);
    await settle();
    expect(limit.activeCount + limit.pendingCount).toBe(0);
    const m = await collectMetrics(reader);
    expect(counterValue(m, METRIC_OPERATION_QUEUED, SERIES)).toBe(0);
    expect(counterValue(m, METRIC_OPERATION_ACTIVE, SERIES)).toBe(0);
  });

  it('keeps FIFO order between operations with and without a signal', async () => {
    const { job, log } = setup();
    const limit = pLimit(2);
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const jobs = names.map((n, i) => job(limit, n, i % 3 === 0 ? new AbortController().signal : undefined));
    await settle();
    for (const j of jobs) {
      await j.finish();
      await settle();
    }
    expect(log).toEqual(names);
    expect(limit.activeCount + limit.pendingCount).toBe(0);
  });
});

describe('acquire()/release() objects', () => {
  it('acquire() resolving a release function: the limit is respected and released', async () => {
    const { job, log, maxActive } = setup();
    const limit = countingLimit(2);
    const jobs = ['a', 'b', 'c', 'd'].map((n) => job(limit, n));
    await settle();
    expect(log).toEqual(['a', 'b']);
    for (const j of jobs) {
      await j.finish();
      await settle();
    }
    expect(maxActive()).toBe(2);
    expect(limit.free).toBe(2);
  });

  it('acquire() resolving nothing: release() is called', async () => {
    const { options } = setup();
    const calls: string[] = [];
    const limit = {
      async acquire() {
        calls.push('acquire');
      },
      release() {
        calls.push('release');
      },
    };
    expect(await resourcesOperation(limit, options, () => calls.push('body'))).toBe(2);
    expect(calls).toEqual(['acquire', 'body', 'release']);
  });

  it('acquire() resolving nothing with no release(): TypeError before the body runs', async () => {
    const { options } = setup();
    let ran = false;
    const settled = await capture(
      resourcesOperation({ acquire: async () => 'token' }, options, () => {
        ran = true;
      }),
    );
    expect(ran).toBe(false);
    expect(settled.ok ? '' : (settled.error as Error).message).toMatch(
      /limit\.acquire\(\) resolved string "token", which is not a release function nor \[value, release\]/,
    );
  });

  it('abort while waiting: rejects at once; the acquisition, when it comes, is given straight back', async () => {
    const { job, log } = setup();
    const limit = countingLimit(1);
    const a = job(limit, 'a');
    const controller = new AbortController();
    const b = job(limit, 'b', controller.signal);
    await settle();
    controller.abort();
    expect((await b.settled).ok).toBe(false);
    await a.finish();
    await settle();
    expect(limit.free).toBe(1);
    expect(log).toEqual(['a']);
  });

  it('async-mutex decorators keep their semantics: withTimeout rejects with E_TIMEOUT, tryAcquire with E_ALREADY_LOCKED', async () => {
    jest.useFakeTimers();
    try {
      const { reader, job } = setup();
      const semaphore = new Semaphore(1);
      const a = job(semaphore, 'a');
      const timed = job(withTimeout(semaphore, 50), 'timed');
      const tried = job(tryAcquire(semaphore), 'tried');
      await jest.advanceTimersByTimeAsync(50);
      expect(await timed.settled).toEqual({ ok: false, error: E_TIMEOUT });
      expect(await tried.settled).toEqual({ ok: false, error: E_ALREADY_LOCKED });
      await a.finish();
      await jest.advanceTimersByTimeAsync(0);
      expect(semaphore.getValue()).toBe(1);
      const m = await collectMetrics(reader);
      expect(histogramCount(m, METRIC_OPERATION_QUEUE_DURATION)).toBe(3);
      expect(histogramCount(m, METRIC_OPERATION_DURATION)).toBe(1);
      expect(counterValue(m, METRIC_OPERATION_QUEUED, SERIES)).toBe(0);
      expect(counterValue(m, METRIC_OPERATION_ACTIVE, SERIES)).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('null (unlimited work)', () => {
  it('runs at once, never counts as queued, and records a queue wait of 0', async () => {
    const { reader, clock, job, log } = setup();
    const jobs = ['a', 'b', 'c'].map((n) => job(null, n));
    await settle();
    expect(log).toEqual(['a', 'b', 'c']);
    let m = await collectMetrics(reader);
    expect(counterValue(m, METRIC_OPERATION_QUEUED, SERIES)).toBe(0);
    expect(counterValue(m, METRIC_OPERATION_ACTIVE, SERIES)).toBe(3);
    clock.time = 8;
    for (const j of jobs) await j.finish();
    m = await collectMetrics(reader);
    expect(histogramPoint(m, METRIC_OPERATION_QUEUE_DURATION, SERIES)).toMatchObject({ count: 3, sum: 0 });
    expect(histogramPoint(m, METRIC_OPERATION_DURATION, OK)).toMatchObject({ count: 3, sum: 24 });
    expect(counterValue(m, METRIC_OPERATION_ACTIVE, SERIES)).toBe(0);
  });
});
