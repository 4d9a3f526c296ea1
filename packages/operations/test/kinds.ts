// Every kind of limit @gym/operations accepts, as one entry each, and the rules every kind must
// meet. The suites that run over limit kinds take them from KINDS, and kinds.test.ts holds each
// kind to each rule: a new kind is one entry here, and every suite covers it.

import { AsyncLocalStorage } from 'node:async_hooks';
import { INSTRUMENTS } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import {
  type MeterableLimit,
  type MeteredLimit,
  type MeteredLimitOptions,
  meteredLimit,
  type OperationLimit,
  resourcesOperation,
} from '@gym/operations';
import {
  collectMetrics,
  counterValue,
  createMetricHarness,
  deferred,
  gaugeValue,
  type PullMetricReader,
  settle,
} from '@gym/test-kit';
import { expect } from '@jest/globals';
import { context, createContextKey, metrics, ROOT_CONTEXT } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { Mutex, Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import pLimit6 from 'p-limit-6';
import { countingLimit } from './helpers.js';

/** One limiter of a kind, made for one test, and what it can tell about itself. */
export interface Made {
  /** The raw limiter. */
  readonly limit: MeterableLimit;
  /** `meteredLimit`'s `capacity`: given only where the limiter cannot tell its slots. */
  readonly capacity: number | undefined;
  /** Its slots now (a Mutex: 1, whatever was asked). */
  slots(): number;
  /** Slots held now, as the limiter itself counts them. */
  held(): number;
  /** Nothing held and nothing waiting, as the limiter itself tells. */
  isFree(): boolean;
  /** Runs `fn` on the raw limiter its own way, as a caller beside this package does. */
  direct<T>(fn: () => PromiseLike<T> | T): Promise<T>;
  /** Changes its slots at run time, where the limiter can (a Semaphore only while nothing is held). */
  resize?(slots: number): void;
}

export interface Kind {
  readonly name: string;
  /** How the package's errors name the kind among those it accepts. */
  readonly named: string;
  /** A new limiter of `slots` slots, or of its one slot when the kind is not `sized`. */
  make(slots: number): Made;
  /** It can have more than one slot. */
  readonly sized: boolean;
  /** Its own queue is first in, first out. */
  readonly fifo: boolean;
  /** It tells whether a slot is free (an acquire()/release() object does not: only its `capacity` and our counts). */
  readonly tellsFree: boolean;
}

/** async-mutex `Semaphore` and `Mutex`: units held are the free units missing. */
function semaphore(slots: number): Made {
  const s = new Semaphore(slots);
  let size = slots;
  return {
    limit: s,
    capacity: undefined,
    slots: () => size,
    held: () => size - s.getValue(),
    isFree: () => s.getValue() === size && !s.isLocked(),
    direct: (fn) => s.runExclusive(async () => fn()),
    resize: (n) => {
      // setValue sets the free units: only while nothing is held is that the size.
      if (s.getValue() !== size) return;
      size = n;
      s.setValue(n);
    },
  };
}

function mutex(): Made {
  const m = new Mutex();
  return {
    limit: m,
    capacity: undefined,
    slots: () => 1,
    held: () => (m.isLocked() ? 1 : 0),
    isFree: () => !m.isLocked(),
    direct: (fn) => m.runExclusive(async () => fn()),
  };
}

/** p-limit 6 and 7: its `concurrency`, `activeCount` and `pendingCount`. */
function pLimitOf(make: typeof pLimit) {
  return (slots: number): Made => {
    const l = make(slots);
    return {
      limit: l,
      capacity: undefined,
      slots: () => l.concurrency,
      held: () => l.activeCount,
      isFree: () => l.activeCount + l.pendingCount === 0,
      direct: (fn) => l(fn),
      resize: (n) => {
        l.concurrency = n;
      },
    };
  };
}

/** An object with acquire() resolving its release function: it tells nothing, so it takes a `capacity`. */
function acquireRelease(slots: number): Made {
  const c = countingLimit(slots);
  return {
    limit: c,
    capacity: slots,
    slots: () => slots,
    held: () => slots - c.free,
    isFree: () => c.free === slots,
    direct: async (fn) => {
      const release = await c.acquire();
      try {
        return await fn();
      } finally {
        release();
      }
    },
  };
}

export const KINDS: readonly Kind[] = [
  {
    name: 'async-mutex Semaphore',
    named: 'async-mutex Semaphore',
    make: semaphore,
    sized: true,
    fifo: true,
    tellsFree: true,
  },
  { name: 'async-mutex Mutex', named: 'Mutex', make: mutex, sized: false, fifo: true, tellsFree: true },
  { name: 'p-limit 7', named: 'p-limit limiter', make: pLimitOf(pLimit), sized: true, fifo: true, tellsFree: true },
  {
    name: 'p-limit 6',
    named: 'p-limit limiter',
    make: pLimitOf(pLimit6 as typeof pLimit),
    sized: true,
    fifo: true,
    tellsFree: true,
  },
  {
    name: 'acquire()/release() object',
    named: 'an object with acquire()',
    make: acquireRelease,
    sized: true,
    fifo: true,
    tellsFree: false,
  },
];

/** `made` wrapped in a metered limit (its `capacity` given where the kind needs one). */
export function metered(made: Made, options: Partial<MeteredLimitOptions> = {}): MeteredLimit {
  return meteredLimit(made.limit, {
    component: 'other',
    limitName: 'kinds',
    capacity: made.capacity,
    ...options,
  } as MeteredLimitOptions);
}

/** What `resourcesOperation` can wait on, for suites over every limit: each kind raw, each metered, and null. */
export const OPERATION_LIMITS: readonly [string, (slots: number) => OperationLimit | null][] = [
  ...KINDS.map((kind): [string, (slots: number) => OperationLimit] => [kind.name, (n) => kind.make(n).limit]),
  ...KINDS.map((kind): [string, (slots: number) => OperationLimit] => [
    `metered ${kind.name}`,
    (n) => metered(kind.make(n)),
  ]),
  ['null', () => null],
];

const OPTIONS = { operation: 'verify', executor: 'subprocess' } as const;
const [operationKey = '', executorKey = ''] = INSTRUMENTS.operationQueued.attributes;
const OPERATION_SERIES = { [operationKey]: OPTIONS.operation, [executorKey]: OPTIONS.executor };
const EXPORTING = { metricsExporting: true, tracesExporting: false, spanGroups: [], orchestrator: false };

/** Work entering a limit one way, and what the SDK exported of it. */
export interface Entered {
  run<T>(body: () => PromiseLike<T> | T): Promise<T>;
  /** The counts the SDK exported now: calls waiting and calls running (undefined when nothing exports). */
  exported(): Promise<{ queued: number; active: number } | undefined>;
  /** Calls the metered limit counts, when it is one. */
  state?(): { queued: number; active: number };
  close(): void;
}

/** The ways work enters a limit: `resourcesOperation` off or measured, with or without a signal, and a metered limit. */
export const WAYS: readonly [string, (made: Made) => Entered][] = [
  ['resourcesOperation, off', (made) => operations(made.limit, undefined, false)],
  ['resourcesOperation, off, with a signal', (made) => operations(made.limit, undefined, true)],
  ['resourcesOperation, measured (injected provider)', (made) => operations(made.limit, createMetricHarness(), false)],
  [
    'resourcesOperation, measured (global provider exporting), with a signal',
    (made) => {
      const harness = createMetricHarness();
      metrics.setGlobalMeterProvider(harness.meterProvider);
      setTelemetryState(EXPORTING);
      const entered = operations(made.limit, { reader: harness.reader }, true);
      return {
        ...entered,
        close: () => {
          setTelemetryState(undefined);
          metrics.disable();
        },
      };
    },
  ],
  [
    'a metered limit, run() with a signal',
    (made) => {
      const { meterProvider, reader } = createMetricHarness();
      const limit = metered(made, { meterProvider });
      return {
        run: (body) => limit.run(body, { signal: new AbortController().signal }),
        exported: () => concurrencyCounts(reader),
        state: () => limit.state(),
        close: () => limit.close(),
      };
    },
  ],
  [
    'resourcesOperation on a metered limit, measured',
    (made) => {
      const harness = createMetricHarness();
      const limit = metered(made, { meterProvider: harness.meterProvider, admissionTimeoutMs: 60_000 });
      return { ...operations(limit, harness, false), state: () => limit.state(), close: () => limit.close() };
    },
  ],
];

function operations(
  limit: OperationLimit,
  sdk: { meterProvider?: MeteredLimitOptions['meterProvider']; reader: PullMetricReader } | undefined,
  withSignal: boolean,
): Entered {
  return {
    run: (body) =>
      resourcesOperation(
        limit,
        {
          ...OPTIONS,
          meterProvider: sdk?.meterProvider,
          signal: withSignal ? new AbortController().signal : undefined,
        },
        body,
      ),
    exported: async () => {
      if (sdk === undefined) return undefined;
      const m = await collectMetrics(sdk.reader);
      return {
        queued: counterValue(m, INSTRUMENTS.operationQueued.name, OPERATION_SERIES),
        active: counterValue(m, INSTRUMENTS.operationActive.name, OPERATION_SERIES),
      };
    },
    close: () => {},
  };
}

async function concurrencyCounts(reader: PullMetricReader) {
  const m = await collectMetrics(reader);
  return {
    queued: gaugeValue(m, INSTRUMENTS.concurrencyQueueDepth.name),
    active: gaugeValue(m, INSTRUMENTS.concurrencyActive.name),
  };
}

export interface Rule {
  readonly name: string;
  check(kind: Kind, way: (made: Made) => Entered): Promise<void>;
}

const contextKey = createContextKey('kinds request');

/** The rules every kind meets, every way in: what a measuring library must never change. */
export const RULES: readonly Rule[] = [
  {
    name: 'the work runs in its caller’s async context (AsyncLocalStorage and the OpenTelemetry context)',
    async check(kind, way) {
      const manager = new AsyncLocalStorageContextManager().enable();
      context.setGlobalContextManager(manager);
      const entered = way(kind.make(2));
      try {
        const store = new AsyncLocalStorage<number>();
        const wrong: number[] = [];
        await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            store.run(i, () =>
              context.with(ROOT_CONTEXT.setValue(contextKey, i), () =>
                entered.run(async () => {
                  const seen = () => store.getStore() === i && context.active().getValue(contextKey) === i;
                  if (!seen()) wrong.push(i);
                  await settle(2);
                  if (!seen()) wrong.push(i);
                }),
              ),
            ),
          ),
        );
        expect(wrong).toEqual([]);
      } finally {
        entered.close();
        context.disable();
      }
    },
  },
  {
    name: 'the limiter’s own order is kept: work and direct callers start in the order they asked (where it is FIFO)',
    async check(kind, way) {
      const made = kind.make(1);
      const entered = way(made);
      try {
        const hold = deferred();
        const holder = made.direct(() => hold.promise);
        await settle();
        const started: string[] = [];
        const asked: string[] = [];
        const calls: Promise<unknown>[] = [];
        for (let i = 0; i < 12; i++) {
          const name = i % 3 === 1 ? `direct ${i}` : `work ${i}`;
          asked.push(name);
          const body = () => {
            started.push(name);
          };
          calls.push(i % 3 === 1 ? made.direct(body) : entered.run(body));
          await settle();
        }
        hold.resolve();
        await Promise.all([holder, ...calls]);
        if (kind.fifo) expect(started).toEqual(asked);
        else expect([...started].sort()).toEqual([...asked].sort());
      } finally {
        entered.close();
      }
    },
  },
  {
    name: 'no work starts before it holds a slot; what is exported counts it running, not waiting',
    async check(kind, way) {
      const made = kind.make(2);
      const slots = made.slots();
      const entered = way(made);
      try {
        const calls = 3 * slots + 1;
        const holds = Array.from({ length: calls }, () => deferred());
        let running = 0;
        let started = 0;
        const breaches: string[] = [];
        const done = holds.map((hold, i) =>
          entered.run(async () => {
            started++;
            running++;
            if (running > slots) breaches.push(`${i}: ${running} running, ${slots} slots`);
            if (made.held() < running) breaches.push(`${i}: the limiter holds ${made.held()} for ${running} running`);
            const state = entered.state?.();
            if (state !== undefined && state.active < running) breaches.push(`${i}: active ${state.active}`);
            await hold.promise;
            running--;
          }),
        );
        for (let i = 0; i <= calls; i++) {
          await settle();
          const exported = await entered.exported();
          if (exported !== undefined) {
            expect(exported).toEqual({ queued: calls - started, active: running });
          }
          expect(running).toBe(Math.min(slots, calls - i));
          holds[i]?.resolve();
        }
        await Promise.all(done);
        expect(breaches).toEqual([]);
        expect(started).toBe(calls);
      } finally {
        entered.close();
      }
    },
  },
  {
    name: 'the slot is back in the limiter once the work’s promise settles, whether it returned or threw',
    async check(kind, way) {
      const made = kind.make(2);
      const entered = way(made);
      try {
        await entered.run(async () => 1);
        expect(made.held()).toBe(0);
        await expect(
          entered.run(async () => {
            throw new Error('the body failed');
          }),
        ).rejects.toThrow('the body failed');
        expect(made.held()).toBe(0);
        await settle();
        expect(made.isFree()).toBe(true);
      } finally {
        entered.close();
      }
    },
  },
];
