// Operations-only test helpers. Everything generic (metric harness, readers, deferred,
// diag capture) comes from @gym/test-kit.

import { INSTRUMENTS } from '@gym/constants';
import { jest } from '@jest/globals';
import { type Meter, type MeterProvider, ValueType } from '@opentelemetry/api';
import { DataPointType, type MetricData } from '@opentelemetry/sdk-metrics';

/** A minimal counting semaphore of the acquire()/release-function kind. */
export function countingLimit(size: number) {
  let free = size;
  const waiters: (() => void)[] = [];
  const limit = {
    get free() {
      return free;
    },
    acquire(): Promise<() => void> {
      return new Promise((resolve) => {
        const grant = () => {
          free--;
          let released = false;
          resolve(() => {
            if (released) return;
            released = true;
            free++;
            waiters.shift()?.();
          });
        };
        if (free > 0) grant();
        else waiters.push(grant);
      });
    },
  };
  return limit;
}

/** mulberry32: a small seeded PRNG, so every run draws the same mix. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Jest's modern fake timers' options. */
type FakeTimersConfig = Exclude<Parameters<typeof jest.useFakeTimers>[0], { legacyFakeTimers?: true } | undefined>;

/**
 * Jest's fake timers, with microtasks left real (`queueMicrotask`, `process.nextTick`): a
 * limiter and the SDK settle their promises as they do in production, and only time is faked.
 */
export function useFakeTimers(config: FakeTimersConfig = {}): void {
  jest.useFakeTimers({ ...config, doNotFake: ['nextTick', 'queueMicrotask', ...(config.doNotFake ?? [])] });
}

/**
 * Jest's fake clock behind `performance.now()`, the package's clock (timers, microtasks and
 * `Date` stay real), starting at 0. `time` moves it; `reads` counts the package's reads of it.
 * Call `restore()` (or `jest.useRealTimers()` and `jest.restoreAllMocks()`) after the test.
 */
export class FakeClock {
  #time = 0;
  readonly #reads;

  constructor() {
    useFakeTimers({
      now: 0,
      doNotFake: [
        'Date',
        'hrtime',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    this.#reads = jest.spyOn(performance, 'now');
  }

  get time(): number {
    return this.#time;
  }

  set time(ms: number) {
    jest.advanceTimersByTime(ms - this.#time);
    this.#time = ms;
  }

  /** How many times `performance.now()` was read since the clock was made. */
  get reads(): number {
    return this.#reads.mock.calls.length;
  }

  restore(): void {
    this.#reads.mockRestore();
    jest.useRealTimers();
  }
}

/** A provider whose every meter is `meter` (to record on one given meter). */
export function providerOf(meter: Meter): MeterProvider {
  return { getMeter: () => meter };
}

/** An instrument as the SDK exports it, in the words of the instrument table (`INSTRUMENTS`). */
export function exportedShape(m: MetricData) {
  const kind =
    m.dataPointType === DataPointType.HISTOGRAM
      ? 'histogram'
      : m.dataPointType === DataPointType.SUM
        ? m.isMonotonic
          ? 'counter'
          : 'up-down counter'
        : 'gauge';
  return {
    name: m.descriptor.name,
    kind,
    unit: m.descriptor.unit,
    valueType: m.descriptor.valueType === ValueType.INT ? 'int' : 'double',
  };
}

interface Row {
  readonly name: string;
  readonly kind: string;
  readonly unit: string;
  readonly valueType: string;
  readonly attributes: readonly string[];
}

/** The rows of the instrument table whose points may carry the attribute `key`. */
export function rowsWith(key: string): Row[] {
  return (Object.values(INSTRUMENTS) as readonly Row[]).filter((row) => row.attributes.includes(key));
}

/** The same rows as {@link exportedShape} says them (an SDK cannot tell an observable instrument). */
export function tableShapes(key: string) {
  return rowsWith(key).map((row) => ({
    name: row.name,
    kind: row.kind.replace(/^observable /, ''),
    unit: row.unit,
    valueType: row.valueType,
  }));
}
