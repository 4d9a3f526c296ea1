// 10,000 mixed calls through a metered limit of each kind: bodies that return, throw, or sleep;
// waits aborted by their caller, waits that outlive the admission deadline, calls refused by the
// bounded queue; half through resourcesOperation (measured), half through run(). Afterwards the
// limit is back to active 0, queue depth 0, available = limit, and every admission counter, in
// state() and in what the SDK exports, equals what the callers themselves saw.

import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  METRIC_OPERATION_ACTIVE,
  METRIC_OPERATION_DURATION,
  METRIC_OPERATION_QUEUED,
} from '@gym/constants';
import {
  AdmissionRejectedError,
  AdmissionTimeoutError,
  type MeterableLimit,
  meteredLimit,
  resourcesOperation,
} from '@gym/operations';
import {
  capture,
  collectMetrics,
  counterValue,
  createMetricHarness,
  histogramCount,
  pointsOf,
  sameAttributes,
} from '@gym/test-kit';
import { describe, expect, it } from '@jest/globals';
import type { MetricData } from '@opentelemetry/sdk-metrics';
import { Mutex, Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { countingLimit, prng } from './helpers.js';

const CALLS = 10_000;
const SEED = 0x2545f491;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The value of the point of `name` with exactly `attributes` (a gauge or a counter), or undefined. */
function value(m: Map<string, MetricData>, name: string, attributes: Record<string, string>): number | undefined {
  return pointsOf<number>(m, name).find((p) => sameAttributes(p.attributes, attributes))?.value;
}

describe.each<[string, () => { limit: MeterableLimit; capacity?: number; slots: number; isFree: () => boolean }]>([
  [
    'async-mutex Semaphore(8)',
    () => {
      const s = new Semaphore(8);
      return { limit: s, slots: 8, isFree: () => s.getValue() === 8 };
    },
  ],
  [
    'async-mutex Mutex',
    () => {
      const m = new Mutex();
      return { limit: m, slots: 1, isFree: () => !m.isLocked() };
    },
  ],
  [
    'p-limit(8)',
    () => {
      const l = pLimit(8);
      return { limit: l, slots: 8, isFree: () => l.activeCount + l.pendingCount === 0 };
    },
  ],
  [
    'acquire()/release() limit of 8',
    () => {
      const c = countingLimit(8);
      return { limit: c, capacity: 8, slots: 8, isFree: () => c.free === 8 };
    },
  ],
])('metered %s', (_name, make) => {
  it(`${CALLS} mixed calls: every count comes back and every admission counter equals what the callers saw`, async () => {
    const random = prng(SEED);
    const { meterProvider: provider, reader } = createMetricHarness();
    const { limit: inner, capacity, slots, isFree } = make();
    const limit = meteredLimit(inner, {
      component: 'resources',
      limitName: 'stress',
      capacity,
      admissionTimeoutMs: 3,
      maxQueued: 24,
      meterProvider: provider,
    });
    const options = { operation: 'verify', executor: 'subprocess', meterProvider: provider } as const;

    const seen = { ran: 0, ranMeasured: 0, rejected: 0, timedOut: 0, cancelled: 0, wrong: 0 };
    let running = 0;
    let maxRunning = 0;
    const done: Promise<void>[] = [];
    for (let i = 0; i < CALLS; i++) {
      const draw = random();
      const measured = random() < 0.5;
      const controller = draw < 0.15 ? new AbortController() : undefined;
      const error = new Error(`call ${i}`);
      let started = false;
      const body = async () => {
        started = true;
        running++;
        maxRunning = Math.max(maxRunning, running);
        try {
          if (draw > 0.9)
            await sleep(5); // longer than the admission deadline
          else await turn();
          if (draw > 0.8 && draw <= 0.9) throw error;
          return i;
        } finally {
          running--;
        }
      };
      const call = measured
        ? resourcesOperation(limit, { ...options, signal: controller?.signal }, body)
        : limit.run(body, { signal: controller?.signal });
      if (controller !== undefined) {
        const turns = Math.floor(random() * 3);
        void (async () => {
          for (let t = 0; t < turns; t++) await turn();
          controller.abort(error);
        })();
      }
      done.push(
        capture(call).then((result) => {
          if (started) {
            seen.ran++;
            if (measured) seen.ranMeasured++;
            const threw = draw > 0.8 && draw <= 0.9;
            const cancelledWhileRunning = result.ok === false && result.error === error && controller !== undefined;
            if (!(result.ok ? !threw && result.value === i : threw || cancelledWhileRunning)) seen.wrong++;
            return;
          }
          if (result.ok) seen.wrong++;
          else if (result.error instanceof AdmissionRejectedError) seen.rejected++;
          else if (result.error instanceof AdmissionTimeoutError) seen.timedOut++;
          else if (result.error === error) seen.cancelled++;
          else seen.wrong++;
        }),
      );
      if (i % 40 === 39) await turn();
    }
    await Promise.all(done);
    for (let t = 0; t < 5; t++) await turn();

    expect(seen.wrong).toBe(0);
    expect(seen.ran + seen.rejected + seen.timedOut + seen.cancelled).toBe(CALLS);
    // Every kind of ending happened, so the counters below were really exercised.
    expect(seen.rejected).toBeGreaterThan(0);
    expect(seen.timedOut).toBeGreaterThan(0);
    expect(seen.cancelled).toBeGreaterThan(0);
    expect(maxRunning).toBeLessThanOrEqual(slots);
    expect(isFree()).toBe(true);

    expect(limit.state()).toEqual({
      limit: slots,
      active: 0,
      available: slots,
      queued: 0,
      admissionTimeouts: seen.timedOut,
      admissionCancelled: seen.cancelled,
      admissionRejected: seen.rejected,
    });
    const m = await collectMetrics(reader);
    const attributes = { [ATTR_CONCURRENCY_COMPONENT]: 'resources', [ATTR_CONCURRENCY_LIMIT_NAME]: 'stress' };
    expect({
      limit: value(m, 'gym.concurrency.limit', attributes),
      active: value(m, 'gym.concurrency.active', attributes),
      available: value(m, 'gym.concurrency.available', attributes),
      queueDepth: value(m, 'gym.concurrency.queue_depth', attributes),
      timeouts: value(m, 'gym.concurrency.admission_timeouts_total', attributes),
      cancelled: value(m, 'gym.concurrency.admission_cancelled_total', attributes),
      rejected: value(m, 'gym.concurrency.admission_rejected_total', attributes),
    }).toEqual({
      limit: slots,
      active: 0,
      available: slots,
      queueDepth: 0,
      timeouts: seen.timedOut,
      cancelled: seen.cancelled,
      rejected: seen.rejected,
    });
    const series = { [ATTR_OPERATION]: 'verify', [ATTR_EXECUTOR]: 'subprocess' };
    expect(counterValue(m, METRIC_OPERATION_QUEUED, series)).toBe(0);
    expect(counterValue(m, METRIC_OPERATION_ACTIVE, series)).toBe(0);
    expect(histogramCount(m, METRIC_OPERATION_DURATION)).toBe(seen.ranMeasured);
  }, 120_000);
});
