// One test per row of the README's outcome table, each asserting on what a real SDK MeterProvider exports.
// Time is Jest's fake clock behind `performance.now()` (test/helpers.ts), so every duration is exact.

import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OPERATION_OUTCOME,
  INSTRUMENTS,
  OUTCOMES,
  type Outcome,
} from '@gym/constants';
import { resourcesOperation } from '@gym/operations';
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
import { Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { FakeClock } from './helpers.js';

afterEach(() => {
  jest.restoreAllMocks();
  jest.useRealTimers();
});

const SERIES = { [ATTR_OPERATION]: 'verify', [ATTR_EXECUTOR]: 'subprocess' };
const withOutcome = (outcome: Outcome) => ({ ...SERIES, [ATTR_OPERATION_OUTCOME]: outcome });

function setup() {
  const { meterProvider: provider, reader } = createMetricHarness();
  const clock = new FakeClock();
  const options = { operation: 'verify', executor: 'subprocess', meterProvider: provider } as const;
  return { provider, reader, clock, options };
}

describe('outcome and edge cases', () => {
  it('body returns, outcome unset → ok, and the result is returned', async () => {
    const { reader, clock, options } = setup();
    const semaphore = new Semaphore(2);

    const result = await resourcesOperation(semaphore, options, async () => {
      clock.time += 7;
      return 'result';
    });

    expect(result).toBe('result');
    const m = await collectMetrics(reader);
    const run = histogramPoint(m, INSTRUMENTS.operationDuration.name, withOutcome('ok'));
    expect(run.count).toBe(1);
    expect(run.sum).toBe(7);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1);
    const queue = histogramPoint(m, INSTRUMENTS.operationQueueDuration.name, SERIES);
    expect(queue.count).toBe(1);
    expect(queue.sum).toBe(0);
    expect(semaphore.getValue()).toBe(2);
  });

  it('a p-limit-shaped limiter whose counts are plain properties (not getters, as p-limit has) is measured', async () => {
    const { reader, options } = setup();
    const inner = pLimit(1);
    const limiter = Object.assign(inner.bind(null) as typeof inner, { activeCount: 0, pendingCount: 0 });
    expect(await resourcesOperation(limiter, options, () => 'result')).toBe('result');
    const m = await collectMetrics(reader);
    expect(histogramPoint(m, INSTRUMENTS.operationDuration.name, withOutcome('ok')).count).toBe(1);
    expect(histogramPoint(m, INSTRUMENTS.operationQueueDuration.name, SERIES).count).toBe(1);
  });

  describe.each(OUTCOMES.map((o) => [o]))('body sets %s', (outcome) => {
    it('then returns → that outcome, result returned', async () => {
      const { reader, options } = setup();
      const result = await resourcesOperation(new Semaphore(1), options, (op) => {
        op.outcome = outcome;
        return 42;
      });
      expect(result).toBe(42);
      const m = await collectMetrics(reader);
      expect(histogramPoint(m, INSTRUMENTS.operationDuration.name, withOutcome(outcome)).count).toBe(1);
      expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1);
    });

    it('then throws → that outcome, the same error rethrown', async () => {
      const { reader, options } = setup();
      const error = new Error('boom');
      const settled = await capture(
        resourcesOperation(new Semaphore(1), options, async (op) => {
          op.outcome = outcome;
          throw error;
        }),
      );
      expect(settled).toEqual({ ok: false, error });
      if (!settled.ok) expect(settled.error).toBe(error);
      const m = await collectMetrics(reader);
      expect(histogramPoint(m, INSTRUMENTS.operationDuration.name, withOutcome(outcome)).count).toBe(1);
      expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1);
    });
  });

  it('body throws, outcome unset → error; the same error is rethrown unchanged', async () => {
    const { reader, clock, options } = setup();
    const semaphore = new Semaphore(1);
    const error = Object.freeze(new TypeError('the verifier broke'));
    const settled = await capture(
      resourcesOperation(semaphore, options, () => {
        clock.time += 3;
        throw error;
      }),
    );
    expect(settled.ok).toBe(false);
    if (!settled.ok) expect(settled.error).toBe(error);
    const m = await collectMetrics(reader);
    const run = histogramPoint(m, INSTRUMENTS.operationDuration.name, withOutcome('error'));
    expect(run.count).toBe(1);
    expect(run.sum).toBe(3);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1);
    expect(semaphore.getValue()).toBe(1);
  });

  it('signal aborts while running and the body throws → cancelled; rethrown', async () => {
    const { reader, clock, options } = setup();
    const semaphore = new Semaphore(1);
    const controller = new AbortController();
    const started = deferred();
    const running = capture(
      resourcesOperation(semaphore, { ...options, signal: controller.signal }, async (op) => {
        started.resolve();
        await new Promise((_, reject) => op.signal?.addEventListener('abort', () => reject(op.signal?.reason)));
      }),
    );
    await started.promise;
    clock.time += 12;
    const reason = new Error('client went away');
    controller.abort(reason);
    const settled = await running;
    expect(settled.ok).toBe(false);
    if (!settled.ok) expect(settled.error).toBe(reason);
    const m = await collectMetrics(reader);
    const run = histogramPoint(m, INSTRUMENTS.operationDuration.name, withOutcome('cancelled'));
    expect(run.count).toBe(1);
    expect(run.sum).toBe(12);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1);
    expect(semaphore.getValue()).toBe(1);
  });

  it('body throws an AbortError (no signal) → cancelled; rethrown', async () => {
    const { reader, options } = setup();
    const abortError = new DOMException('upstream call aborted', 'AbortError');
    const settled = await capture(
      resourcesOperation(pLimit(1), options, async () => {
        throw abortError;
      }),
    );
    expect(settled.ok).toBe(false);
    if (!settled.ok) expect(settled.error).toBe(abortError);
    const m = await collectMetrics(reader);
    expect(histogramPoint(m, INSTRUMENTS.operationDuration.name, withOutcome('cancelled')).count).toBe(1);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1);
  });

  it('a body that returns although its signal aborted → ok (the work completed; documented choice)', async () => {
    const { reader, options } = setup();
    const controller = new AbortController();
    const result = await resourcesOperation(new Semaphore(1), { ...options, signal: controller.signal }, () => {
      controller.abort();
      return 'done anyway';
    });
    expect(result).toBe('done anyway');
    const m = await collectMetrics(reader);
    expect(histogramPoint(m, INSTRUMENTS.operationDuration.name, withOutcome('ok')).count).toBe(1);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1);
  });

  it('signal aborts while waiting → leaves the queue, never runs, no slot, queue wait recorded, no duration, rejects with the reason', async () => {
    const { reader, clock, options } = setup();
    const semaphore = new Semaphore(1);
    const holder = deferred();
    const first = resourcesOperation(semaphore, options, () => holder.promise);
    const controller = new AbortController();
    let ran = false;
    const second = capture(
      resourcesOperation(semaphore, { ...options, signal: controller.signal }, () => {
        ran = true;
      }),
    );
    await settle();
    let m = await collectMetrics(reader);
    expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(1);
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(1);

    clock.time += 40;
    const reason = new Error('caller gave up');
    controller.abort(reason);
    const settled = await second;
    expect(settled.ok).toBe(false);
    if (!settled.ok) expect(settled.error).toBe(reason);
    // It left at once: queued back to 0 while the first still runs, and it took no slot.
    m = await collectMetrics(reader);
    expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(0);
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(1);
    expect(semaphore.getValue()).toBe(0);

    clock.time += 10;
    holder.resolve();
    await first;
    // The moment the first releases, the slot is free: no ghost waiter took it.
    expect(semaphore.getValue()).toBe(1);
    expect(semaphore.isLocked()).toBe(false);
    await settle();
    expect(ran).toBe(false);
    expect(semaphore.getValue()).toBe(1);

    m = await collectMetrics(reader);
    const queue = histogramPoint(m, INSTRUMENTS.operationQueueDuration.name, SERIES);
    expect(queue.count).toBe(2);
    expect(queue.sum).toBe(40); // first: 0, aborted second: 40
    expect(queue.max).toBe(40);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(1); // only the first ran
    expect(histogramPoint(m, INSTRUMENTS.operationDuration.name, withOutcome('ok')).sum).toBe(50);
    expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(0);
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
  });

  it('a signal already aborted at entry → rejects with its reason without touching the limit; no queue point', async () => {
    const { reader, options } = setup();
    const acquires: string[] = [];
    const limit = {
      acquire: async () => {
        acquires.push('acquire');
        return () => {};
      },
    };
    const reason = new Error('already gone');
    let ran = false;
    const settled = await capture(
      resourcesOperation(limit, { ...options, signal: AbortSignal.abort(reason) }, () => {
        ran = true;
      }),
    );
    expect(settled).toEqual({ ok: false, error: reason });
    expect(ran).toBe(false);
    expect(acquires).toEqual([]);
    const m = await collectMetrics(reader);
    expect(histogramCount(m, INSTRUMENTS.operationQueueDuration.name)).toBe(0); // it never asked, never waited
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(0);
  });

  describe('operation or executor outside its set → RangeError naming the value and the allowed ones, before the limit is touched', () => {
    it.each([
      [
        'operation',
        { operation: 'verifyy', executor: 'inline' },
        /^resourcesOperation: options\.operation must be one of "verify", "tool", "judge", "other"; got string "verifyy"$/,
      ],
      [
        'executor',
        { operation: 'tool', executor: 'gpu' },
        /^resourcesOperation: options\.executor must be one of "inline", "thread", "process", "subprocess", "other"; got string "gpu"$/,
      ],
      [
        'operation (non-string)',
        { operation: 7, executor: 'inline' },
        /options\.operation must be one of .*; got number 7$/,
      ],
    ])('%s', async (_name, bad, message) => {
      const { reader, provider, clock } = setup();
      const semaphore = new Semaphore(1);
      const acquires: number[] = [];
      const counting = {
        acquire: async () => {
          acquires.push(1);
          return () => {};
        },
      };
      const options = { ...bad, meterProvider: provider } as never;
      for (const limit of [semaphore, counting, null]) {
        let ran = false;
        const settled = await capture(
          resourcesOperation(limit, options, () => {
            ran = true;
          }),
        );
        expect(settled.ok).toBe(false);
        if (!settled.ok) {
          expect(settled.error).toBeInstanceOf(RangeError);
          expect((settled.error as Error).message).toMatch(message);
        }
        expect(ran).toBe(false);
      }
      expect(semaphore.getValue()).toBe(1);
      expect(acquires).toEqual([]);
      expect(clock.reads).toBe(0);
      expect((await collectMetrics(reader)).size).toBe(0);
    });
  });

  it('outcome set to a value outside OUTCOMES → RangeError at the assignment; the outcome keeps its value', async () => {
    const { reader, options } = setup();
    let caught: unknown;
    let after: Outcome | undefined;
    await resourcesOperation(null, options, (op) => {
      op.outcome = 'timeout';
      try {
        op.outcome = 'timed_out' as Outcome;
      } catch (error) {
        caught = error;
      }
      after = op.outcome;
    });
    expect(caught).toBeInstanceOf(RangeError);
    expect((caught as Error).message).toBe(
      'op.outcome must be one of "ok", "error", "timeout", "cancelled", "crashed" (or undefined); got string "timed_out"',
    );
    expect(after).toBe('timeout');
    const m = await collectMetrics(reader);
    expect(histogramPoint(m, INSTRUMENTS.operationDuration.name, withOutcome('timeout')).count).toBe(1);
  });

  it('an outcome assignment error that escapes the body → error (the RangeError is rethrown)', async () => {
    const { reader, options } = setup();
    const settled = await capture(
      resourcesOperation(null, options, (op) => {
        op.outcome = 'bogus' as Outcome;
      }),
    );
    expect(settled.ok).toBe(false);
    if (!settled.ok) expect(settled.error).toBeInstanceOf(RangeError);
    const m = await collectMetrics(reader);
    expect(histogramPoint(m, INSTRUMENTS.operationDuration.name, withOutcome('error')).count).toBe(1);
  });
});

describe('programming errors other than bounded values', () => {
  it.each([
    ['undefined limit', undefined, /^resourcesOperation: limit must be .+, or null for unlimited work; got undefined$/],
    ['a number', 3, /got number 3$/],
    ['a plain function', () => {}, /got function$/],
    ['an object without acquire', { release() {} }, /got object \(Object\) \{\}$/],
  ])('a limit that is %s → TypeError', async (_name, limit, message) => {
    const { reader, options } = setup();
    const settled = await capture(resourcesOperation(limit as never, options, () => 1));
    expect(settled.ok).toBe(false);
    if (!settled.ok) {
      expect(settled.error).toBeInstanceOf(TypeError);
      expect((settled.error as Error).message).toMatch(message);
    }
    expect((await collectMetrics(reader)).size).toBe(0);
  });

  // With nothing recording and nothing to race the limit is used as its type says, without a
  // lookup (README, "How each limit is entered"): a value that is no limit fails where it is used.
  it.each([
    ['undefined', undefined],
    ['a number', 3],
    ['an object without acquire', { release() {} }],
  ])('unmeasured, a limit that is %s → TypeError, and the body never runs', async (_name, limit) => {
    let ran = false;
    const settled = await capture(
      resourcesOperation(limit as never, { operation: 'verify', executor: 'subprocess' }, () => {
        ran = true;
      }),
    );
    expect(settled.ok).toBe(false);
    if (!settled.ok) expect(settled.error).toBeInstanceOf(TypeError);
    expect(ran).toBe(false);
  });

  it.each([
    ['measured', true],
    ['unmeasured', false],
  ])(
    '%s, an acquire() that resolves nothing to release, on a limit without release() → TypeError, and the body never runs',
    async (_name, measured) => {
      const { options } = setup();
      let ran = false;
      const settled = await capture(
        resourcesOperation(
          { acquire: async () => 'slot' },
          measured ? options : { operation: 'verify', executor: 'subprocess' },
          () => {
            ran = true;
          },
        ),
      );
      expect(settled.ok ? undefined : (settled.error as Error).message).toMatch(
        /^resourcesOperation: limit\.acquire\(\) resolved string "slot", which is not a release function/,
      );
      expect(ran).toBe(false);
    },
  );

  it('a body that is not a function, or a signal that is not an AbortSignal → TypeError', async () => {
    const { options } = setup();
    const noBody = await capture(resourcesOperation(null, options, 'run' as never));
    expect(noBody.ok ? undefined : (noBody.error as Error).message).toBe(
      'resourcesOperation: body must be a function; got string "run"',
    );
    const badSignal = await capture(resourcesOperation(null, { ...options, signal: {} as AbortSignal }, () => 1));
    expect(badSignal.ok ? undefined : (badSignal.error as Error).message).toBe(
      'resourcesOperation: options.signal must be an AbortSignal; got object (Object) {}',
    );
  });
});

describe('the last call remembered', () => {
  const QUEUE = (operation: string, executor: string) => ({
    [ATTR_OPERATION]: operation,
    [ATTR_EXECUTOR]: executor,
  });

  it('a call that differs from the one before in its limit, provider or names uses its own', async () => {
    const a = createMetricHarness();
    const b = createMetricHarness();
    const busy = pLimit(1);
    const free = pLimit(1);
    const hold = deferred();
    const tool = { operation: 'tool', executor: 'inline' } as const;
    const verify = { operation: 'verify', executor: 'subprocess' } as const;
    const holding = resourcesOperation(busy, { ...tool, meterProvider: a.meterProvider }, () => hold.promise);
    // Another limit with the same names and provider runs at once, not behind `busy`.
    let ran = false;
    const beside = resourcesOperation(free, { ...tool, meterProvider: a.meterProvider }, () => {
      ran = true;
    });
    await settle();
    expect(ran).toBe(true);
    await beside;
    await resourcesOperation(free, { ...tool, meterProvider: b.meterProvider }, () => 1);
    // Then only the operation differs, then only the executor.
    await resourcesOperation(
      free,
      { operation: 'verify', executor: 'inline', meterProvider: b.meterProvider },
      () => 1,
    );
    await resourcesOperation(free, { ...verify, meterProvider: b.meterProvider }, () => 1);
    await resourcesOperation(null, { ...verify, meterProvider: a.meterProvider }, () => 1);
    hold.resolve();
    await holding;

    const onA = await a.collect();
    const onB = await b.collect();
    expect(histogramPoint(onA, INSTRUMENTS.operationQueueDuration.name, QUEUE('tool', 'inline')).count).toBe(2);
    expect(histogramPoint(onA, INSTRUMENTS.operationQueueDuration.name, QUEUE('verify', 'subprocess')).count).toBe(1);
    expect(histogramPoint(onB, INSTRUMENTS.operationQueueDuration.name, QUEUE('tool', 'inline')).count).toBe(1);
    expect(histogramPoint(onB, INSTRUMENTS.operationQueueDuration.name, QUEUE('verify', 'inline')).count).toBe(1);
    expect(histogramPoint(onB, INSTRUMENTS.operationQueueDuration.name, QUEUE('verify', 'subprocess')).count).toBe(1);
  });
});
