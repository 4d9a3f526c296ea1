// Aborts, attacked: a signal that aborts in the gap between "a slot was granted" and "the body
// starts"; one signal shared by 1,000 waiting operations; and 1,000 operations that abort while
// queued on a p-limit limiter. Every case runs measured (an injected meter) and unmeasured.

import { getEventListeners } from 'node:events';
import { ATTR_EXECUTOR, ATTR_OPERATION, INSTRUMENTS } from '@gym/constants';
import { meteredLimit, type OperationLimit, resourcesOperation } from '@gym/operations';
import {
  capture,
  collectMetrics,
  counterValue,
  createMetricHarness,
  deferred,
  type PullMetricReader,
  settle,
  waitFor,
} from '@gym/test-kit';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { MeterProvider } from '@opentelemetry/sdk-metrics';
import { Mutex, Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { countingLimit, FakeClock } from './helpers.js';

afterEach(() => {
  jest.restoreAllMocks();
  jest.useRealTimers();
});

const SERIES = { [ATTR_OPERATION]: 'tool', [ATTR_EXECUTOR]: 'inline' };

interface Made {
  limit: OperationLimit;
  isFree: () => boolean;
}

const KINDS: [string, () => Made][] = [
  [
    'async-mutex Semaphore',
    () => {
      const s = new Semaphore(1);
      return { limit: s, isFree: () => s.getValue() === 1 && !s.isLocked() };
    },
  ],
  [
    'async-mutex Mutex',
    () => {
      const m = new Mutex();
      return { limit: m, isFree: () => !m.isLocked() };
    },
  ],
  [
    'p-limit',
    () => {
      const l = pLimit(1);
      return { limit: l, isFree: () => l.activeCount + l.pendingCount === 0 };
    },
  ],
  [
    'acquire()/release() object',
    () => {
      const c = countingLimit(1);
      return { limit: c, isFree: () => c.free === 1 };
    },
  ],
  ...(['semaphore', 'p-limit', 'acquire-release'] as const).map((inner): [string, () => Made] => [
    `metered limit over ${inner}`,
    () => {
      const wrapped = inner === 'semaphore' ? new Semaphore(1) : inner === 'p-limit' ? pLimit(1) : countingLimit(1);
      const limit = meteredLimit(wrapped, {
        component: 'resources',
        limitName: 'abort_attack',
        capacity: inner === 'acquire-release' ? 1 : undefined,
        admissionTimeoutMs: 60_000,
        maxQueued: 5_000,
      });
      return {
        limit,
        isFree: () => {
          const state = limit.state();
          return state.active === 0 && state.queued === 0 && state.available === 1;
        },
      };
    },
  ]),
];

const PATHS: [string, () => { provider?: MeterProvider; reader?: PullMetricReader }][] = [
  [
    'measured',
    () => {
      const { meterProvider: provider, reader } = createMetricHarness();
      return { provider, reader };
    },
  ],
  ['unmeasured', () => ({})],
];

/** Runs `fn` after `depth` microtask turns. */
function afterMicrotasks(depth: number, fn: () => void): void {
  let chain = Promise.resolve();
  for (let i = 0; i < depth; i++) chain = chain.then(() => {});
  void chain.then(fn);
}

describe.each(KINDS)('%s', (_kind, make) => {
  describe.each(PATHS)('%s', (_path, sdk) => {
    it('a signal that aborts at any microtask after the holder leaves: the body never starts with an aborted signal; if it did not run, the call rejects with the reason and the slot is back', async () => {
      const outcomes = new Set<string>();
      // Depths 0–40: microtasks after the holder was released. Then a few more once the waiter
      // has run (p-limit may let it in only when its line looks again, a millisecond later).
      const schedules = [
        ...Array.from({ length: 41 }, (_, depth) => ({ depth, afterRun: false })),
        ...Array.from({ length: 4 }, (_, depth) => ({ depth, afterRun: true })),
      ];
      for (const { depth, afterRun } of schedules) {
        const { provider, reader } = sdk();
        const { limit, isFree } = make();
        const options = { operation: 'tool', executor: 'inline', meterProvider: provider } as const;
        const hold = deferred();
        const holder = resourcesOperation(limit, options, () => hold.promise);
        const controller = new AbortController();
        const reason = new Error(`aborted at depth ${depth}${afterRun ? ' after the run' : ''}`);
        let startedAborted = false;
        let ran = false;
        const waiter = capture(
          resourcesOperation(limit, { ...options, signal: controller.signal }, (op) => {
            ran = true;
            if (op.signal?.aborted) startedAborted = true;
            return 'ran';
          }),
        );
        await settle();
        hold.resolve();
        if (afterRun) await waitFor('the waiter to run', () => ran);
        afterMicrotasks(depth, () => controller.abort(reason));
        await holder;
        const result = await waiter;
        await settle();
        expect({ depth, startedAborted }).toEqual({ depth, startedAborted: false });
        if (ran) {
          expect(result).toEqual({ ok: true, value: 'ran' });
          outcomes.add('ran');
        } else {
          expect(result).toEqual({ ok: false, error: reason });
          outcomes.add('rejected');
        }
        expect({ depth, free: isFree() }).toEqual({ depth, free: true });
        if (reader !== undefined) {
          const m = await collectMetrics(reader);
          expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(0);
          expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
        }
      }
      // The sweep covered both sides of the race: some aborts came before the start, some after.
      expect([...outcomes].sort()).toEqual(['ran', 'rejected']);
    });

    it('1,000 operations waiting on one shared signal add one abort listener, not 1,000; all leave when it aborts', async () => {
      const { provider } = sdk();
      const { limit, isFree } = make();
      const options = { operation: 'tool', executor: 'inline', meterProvider: provider } as const;
      const shutdown = new AbortController();
      const hold = deferred();
      const holder = resourcesOperation(limit, options, () => hold.promise);
      let ran = 0;
      const waiters = Array.from({ length: 1000 }, () =>
        capture(
          resourcesOperation(limit, { ...options, signal: shutdown.signal }, () => {
            ran++;
          }),
        ),
      );
      await settle();
      expect(getEventListeners(shutdown.signal, 'abort').length).toBeLessThanOrEqual(1);
      const reason = new Error('server shutting down');
      shutdown.abort(reason);
      const results = await Promise.all(waiters);
      expect(results.every((r) => !r.ok && r.error === reason)).toBe(true);
      expect(ran).toBe(0);
      hold.resolve();
      await holder;
      // An acquire()/release() limit cannot withdraw a waiter: its 1,000 late acquisitions are
      // given straight back one by one, within this turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(isFree()).toBe(true);
      expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    });

    it('a shared signal that never aborts keeps no listener once nobody waits on it', async () => {
      const { provider } = sdk();
      const { limit, isFree } = make();
      const options = { operation: 'tool', executor: 'inline', meterProvider: provider } as const;
      const server = new AbortController();
      const hold = deferred();
      const holder = resourcesOperation(limit, options, () => hold.promise);
      const waiters = Array.from({ length: 50 }, (_, i) =>
        resourcesOperation(limit, { ...options, signal: server.signal }, () => i),
      );
      await settle();
      hold.resolve();
      await holder;
      expect(await Promise.all(waiters)).toEqual(Array.from({ length: 50 }, (_, i) => i));
      await settle();
      expect(getEventListeners(server.signal, 'abort')).toHaveLength(0);
      expect(isFree()).toBe(true);
    });
  });
});

describe('p-limit: 1,000 queued operations abort', () => {
  describe.each(PATHS)('%s', (_path, sdk) => {
    it.each([
      ['a holder without a signal', false],
      ['a holder with a signal', true],
    ])(
      '%s: every caller leaves at once; p-limit’s own queue gives their places straight back, no body runs',
      async (_name, holderHasSignal) => {
        const { provider, reader } = sdk();
        const limit = pLimit(1);
        const clock = new FakeClock();
        const options = { operation: 'tool', executor: 'inline', meterProvider: provider } as const;
        const hold = deferred();
        const holder = resourcesOperation(
          limit,
          { ...options, signal: holderHasSignal ? new AbortController().signal : undefined },
          () => hold.promise,
        );
        const controller = new AbortController();
        let ran = 0;
        const waiters = Array.from({ length: 1000 }, () =>
          capture(
            resourcesOperation(limit, { ...options, signal: controller.signal }, () => {
              ran++;
            }),
          ),
        );
        await settle();
        expect(limit.activeCount).toBe(1);

        const reason = new Error('clients went away');
        controller.abort(reason);
        // Their places stay in p-limit's own queue (p-limit cannot withdraw one) until it reaches them.
        expect(limit.activeCount).toBe(1);
        const results = await Promise.all(waiters);
        expect(results.every((r) => !r.ok && r.error === reason)).toBe(true);
        if (reader !== undefined) {
          const m = await collectMetrics(reader);
          expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(0);
          expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(1);
        }

        let nextStarted = false;
        const next = resourcesOperation(limit, options, () => {
          nextStarted = true;
          return 'next';
        });
        clock.time = 50;
        hold.resolve();
        await holder;
        expect(await next).toBe('next'); // after the 1,000 places, each given back at once
        expect(nextStarted).toBe(true);
        expect(ran).toBe(0);
        expect(limit.activeCount + limit.pendingCount).toBe(0);
      },
    );
  });
});
