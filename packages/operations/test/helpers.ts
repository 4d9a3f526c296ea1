// Test helpers: a real SDK MeterProvider with a pull reader, readers for what it exported, a
// manual clock and a deferred. Assertions go through what the SDK exports, never through mocks.

import { afterEach, beforeEach } from '@jest/globals';
import { type Attributes, type DiagLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  MeterProvider,
  type MetricData,
  MetricReader,
} from '@opentelemetry/sdk-metrics';

/** A pull reader: `collect()` returns what the SDK would export now. */
export class TestReader extends MetricReader {
  constructor(temporality: AggregationTemporality = AggregationTemporality.CUMULATIVE) {
    super({ aggregationTemporalitySelector: () => temporality });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** A fresh MeterProvider with one TestReader (cumulative, like Prometheus, unless told otherwise). */
export function newSdk(temporality?: AggregationTemporality): { provider: MeterProvider; reader: TestReader } {
  const reader = new TestReader(temporality);
  const provider = new MeterProvider({ readers: [reader] });
  return { provider, reader };
}

/** Every metric the reader exports now, by instrument name. */
export async function exported(reader: TestReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics, errors } = await reader.collect();
  if (errors.length > 0) throw new AggregateError(errors, 'collection errors');
  const byName = new Map<string, MetricData>();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
  }
  return byName;
}

function sameAttributes(a: Attributes, b: Attributes): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

/** The histogram point with exactly these attributes, or undefined. */
export function histogramPoint(
  metrics: Map<string, MetricData>,
  name: string,
  attributes: Attributes,
): DataPoint<Histogram> | undefined {
  const metric = metrics.get(name);
  if (metric === undefined) return undefined;
  return (metric.dataPoints as DataPoint<Histogram>[]).find((p) => sameAttributes(p.attributes, attributes));
}

/** The value of the (observable) counter point with exactly these attributes, or undefined. */
export function counterValue(
  metrics: Map<string, MetricData>,
  name: string,
  attributes: Attributes,
): number | undefined {
  const metric = metrics.get(name);
  if (metric === undefined) return undefined;
  const point = (metric.dataPoints as DataPoint<number>[]).find((p) => sameAttributes(p.attributes, attributes));
  return point?.value;
}

/** Total count of a histogram over all its points. */
export function histogramCount(metrics: Map<string, MetricData>, name: string): number {
  const metric = metrics.get(name);
  if (metric === undefined) return 0;
  return (metric.dataPoints as DataPoint<Histogram>[]).reduce((n, p) => n + p.value.count, 0);
}

/** A clock the test moves by hand, counting its reads. */
export class ManualClock {
  time = 0;
  reads = 0;
  readonly now = (): number => {
    this.reads++;
    return this.time;
  };
}

/** A promise with its resolve/reject outside. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every queued microtask (and the promise chains they start) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** The promise's outcome, without letting a rejection go unhandled. */
export function capture<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

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

/**
 * Registers a diag logger that keeps every warning and error, and returns them; `stop()`
 * unregisters it. Call in `beforeEach` and stop in `afterEach`.
 */
export function captureWarnings(): { messages: string[]; stop: () => void } {
  const messages: string[] = [];
  const push = (message: string) => {
    messages.push(message);
  };
  const logger: DiagLogger = { error: push, warn: push, info: () => {}, debug: () => {}, verbose: () => {} };
  diag.setLogger(logger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  return { messages, stop: () => diag.disable() };
}

/** The warnings of the running test, captured by hooks this registers (call at the top of a file). */
export function collectWarnings(): { messages: string[] } {
  const box = { messages: [] as string[] };
  let stop = () => {};
  beforeEach(() => {
    const capture = captureWarnings();
    box.messages = capture.messages;
    stop = capture.stop;
  });
  afterEach(() => stop());
  return box;
}
