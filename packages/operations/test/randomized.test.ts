// 10,000 mixed calls per limit kind, on fake time (so nothing depends on the machine's speed):
// calls through resourcesOperation (measured) and through the metered limit's run(), direct calls
// on the raw limiter beside them, bodies that return, throw or hold for a while, waits aborted by
// their caller, waits past the admission deadline, refusals of the bounded queue, callers that ask
// again the moment their previous call settled, and changes of the limiter's size (setValue,
// concurrency) along the way. At quiet points and at the end, every
// number exported, under a cumulative reader and a delta reader, equals what the callers counted.

import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OPERATION_OUTCOME,
  INSTRUMENTS,
} from '@gym/constants';
import { AdmissionRejectedError, AdmissionTimeoutError, resourcesOperation } from '@gym/operations';
import { collectMetrics, DeltaPullMetricReader, PullMetricReader, pointsOf, sameAttributes } from '@gym/test-kit';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { Attributes } from '@opentelemetry/api';
import { type Histogram, MeterProvider, type MetricData } from '@opentelemetry/sdk-metrics';
import { prng, useFakeTimers } from './helpers.js';
import { KINDS, metered } from './kinds.js';

const CALLS = 10_000;
const SEED = 0x5eed1;
const LIMIT = { [ATTR_CONCURRENCY_COMPONENT]: 'resources', [ATTR_CONCURRENCY_LIMIT_NAME]: 'random' };
const SERIES = { [ATTR_OPERATION]: 'verify', [ATTR_EXECUTOR]: 'subprocess' };

afterEach(() => {
  jest.useRealTimers();
});

function point(m: Map<string, MetricData>, name: string, attributes: Attributes): number | undefined {
  return pointsOf<number>(m, name).find((p) => sameAttributes(p.attributes, attributes))?.value;
}

function histogramCount(m: Map<string, MetricData>, name: string, attributes: Attributes): number {
  return pointsOf<Histogram>(m, name).find((p) => sameAttributes(p.attributes, attributes))?.value.count ?? 0;
}

describe.each(KINDS.map((kind) => [kind.name, kind] as const))('%s', (_name, of) => {
  it(`${CALLS} mixed calls: every exported number equals what the callers counted`, async () => {
    useFakeTimers();
    const random = prng(SEED);
    const cumulative = new PullMetricReader();
    const delta = new DeltaPullMetricReader();
    const meterProvider = new MeterProvider({ readers: [cumulative, delta] });
    const kind = of.make(4);
    const limit = metered(kind, {
      component: 'resources',
      limitName: 'random',
      admissionTimeoutMs: 3,
      maxQueued: Math.min(6, 2 * kind.slots()),
      meterProvider,
    });
    const options = { operation: 'verify', executor: 'subprocess', meterProvider } as const;

    // What the callers saw.
    const seen = { rejected: 0, timedOut: 0, cancelled: 0, wrong: 0, waiting: 0, running: 0 };
    const outcomes = { ok: 0, error: 0, cancelled: 0 };
    let measuredWaits = 0; // measured calls that asked their limit: held, cancelled or timed out
    // What the delta reader exported, summed over its collections.
    const deltaSums = { timeouts: 0, cancelled: 0, rejected: 0, queueWaits: 0, ok: 0, error: 0 };
    const collectDelta = async () => {
      const m = await collectMetrics(delta);
      deltaSums.timeouts += point(m, INSTRUMENTS.admissionTimeouts.name, LIMIT) ?? 0;
      deltaSums.cancelled += point(m, INSTRUMENTS.admissionCancelled.name, LIMIT) ?? 0;
      deltaSums.rejected += point(m, INSTRUMENTS.admissionRejected.name, LIMIT) ?? 0;
      deltaSums.queueWaits += histogramCount(m, INSTRUMENTS.operationQueueDuration.name, SERIES);
      deltaSums.ok += histogramCount(m, INSTRUMENTS.operationDuration.name, {
        ...SERIES,
        [ATTR_OPERATION_OUTCOME]: 'ok',
      });
      deltaSums.error += histogramCount(m, INSTRUMENTS.operationDuration.name, {
        ...SERIES,
        [ATTR_OPERATION_OUTCOME]: 'error',
      });
      return m;
    };
    /** At a quiet point (every microtask drained): the live numbers equal the callers' own. */
    const checkLive = async () => {
      const m = await collectMetrics(cumulative);
      expect({
        queueDepth: point(m, INSTRUMENTS.concurrencyQueueDepth.name, LIMIT),
        active: point(m, INSTRUMENTS.concurrencyActive.name, LIMIT),
      }).toEqual({ queueDepth: seen.waiting, active: seen.running });
      // Direct callers hold slots too: the free slots are at most the limit's size.
      expect(point(m, INSTRUMENTS.concurrencyAvailable.name, LIMIT)).toBeLessThanOrEqual(kind.slots());
      // The oldest wait: 0 with nobody waiting, and never beyond the deadline (3 ms, fake time).
      const oldest = point(m, INSTRUMENTS.concurrencyOldestWait.name, LIMIT) ?? Number.NaN;
      if (seen.waiting === 0) expect(oldest).toBe(0);
      else expect(oldest >= 0 && oldest <= 3).toBe(true);
    };

    let outstanding = 0;
    /**
     * One call of ours. A follow-up is made by the caller the moment its previous call settled, as
     * a worker loop does: it arrives right after a release, before the call granted that slot ran.
     */
    const issue = (i: number, followUp: boolean): void => {
      const holdMs = Math.floor(random() * 6);
      const throws = random() < 0.1;
      const error = new Error(`call ${i}`);
      const measured = random() < 0.55;
      const controller = random() < 0.2 ? new AbortController() : undefined;
      const again = !followUp && random() < 0.3;
      let started = false;
      let settled = false;
      seen.waiting++;
      outstanding++;
      const body = async () => {
        started = true;
        seen.waiting--;
        seen.running++;
        try {
          await new Promise((resolve) => setTimeout(resolve, holdMs));
          if (throws) throw error;
          return i;
        } finally {
          seen.running--;
        }
      };
      const call = measured
        ? resourcesOperation(limit, { ...options, signal: controller?.signal }, body)
        : limit.run(body, { signal: controller?.signal });
      if (controller !== undefined) {
        const abortAfter = Math.floor(random() * 4);
        setTimeout(() => {
          if (!settled) controller.abort(error);
        }, abortAfter);
      }
      call
        .then(
          (value) => {
            settled = true;
            if (!started || value !== i) seen.wrong++;
            if (measured) {
              outcomes.ok++;
              measuredWaits++;
            }
          },
          (reason: unknown) => {
            settled = true;
            if (started) {
              if (reason !== error) seen.wrong++;
              if (measured) {
                measuredWaits++;
                if (controller?.signal.aborted) outcomes.cancelled++;
                else outcomes.error++;
              }
              return;
            }
            seen.waiting--;
            if (reason instanceof AdmissionRejectedError) seen.rejected++;
            else if (reason instanceof AdmissionTimeoutError) {
              seen.timedOut++;
              if (measured) measuredWaits++;
            } else if (reason === error) {
              seen.cancelled++;
              if (measured) measuredWaits++;
            } else seen.wrong++;
          },
        )
        .then(() => {
          outstanding--;
          if (again) issue(i, true);
        });
    };

    for (let i = 0; i < CALLS; i++) {
      if (random() < 0.15 && of.tellsFree) {
        // A direct caller of the raw limiter, beside ours: never counted by us (left out where the
        // limiter cannot tell a free slot: there only our own counts judge the limit).
        const holdMs = Math.floor(random() * 6);
        outstanding++;
        void kind
          .direct(async () => {
            await new Promise((resolve) => setTimeout(resolve, holdMs));
          })
          .then(() => {
            outstanding--;
          });
      } else {
        issue(i, false);
      }
      // About as many calls as the limit's slots can serve (bodies hold 2.5 ms on average), so
      // that every ending is common: held, refused, timed out, aborted.
      if (i % 5 === 4) {
        await jest.advanceTimersByTimeAsync(Math.ceil(12 / kind.slots()));
        if (i % 500 === 499) await checkLive();
        if (i % 1000 === 999) await collectDelta();
        if (i % 300 === 299) kind.resize?.(2 + Math.floor(random() * 5));
      }
    }
    while (outstanding > 0) await jest.advanceTimersByTimeAsync(10);

    expect(seen.wrong).toBe(0);
    expect(seen.waiting).toBe(0);
    expect(seen.running).toBe(0);
    // Every kind of ending was common (at least 100 of each), so every counter was exercised.
    expect(Math.min(seen.rejected, seen.timedOut, seen.cancelled, outcomes.ok, outcomes.error)).toBeGreaterThan(100);
    expect(limit.state()).toMatchObject({
      active: 0,
      queued: 0,
      admissionTimeouts: seen.timedOut,
      admissionCancelled: seen.cancelled,
      admissionRejected: seen.rejected,
    });

    const m = await collectMetrics(cumulative);
    const expected = {
      limit: kind.slots(),
      available: kind.slots(),
      active: 0,
      queueDepth: 0,
      oldest: 0,
      timeouts: seen.timedOut,
      cancelled: seen.cancelled,
      rejected: seen.rejected,
      queued: 0,
      running: 0,
      queueWaits: measuredWaits,
      ok: outcomes.ok,
      error: outcomes.error,
    };
    expect({
      limit: point(m, INSTRUMENTS.concurrencyLimit.name, LIMIT),
      available: point(m, INSTRUMENTS.concurrencyAvailable.name, LIMIT),
      active: point(m, INSTRUMENTS.concurrencyActive.name, LIMIT),
      queueDepth: point(m, INSTRUMENTS.concurrencyQueueDepth.name, LIMIT),
      oldest: point(m, INSTRUMENTS.concurrencyOldestWait.name, LIMIT),
      timeouts: point(m, INSTRUMENTS.admissionTimeouts.name, LIMIT),
      cancelled: point(m, INSTRUMENTS.admissionCancelled.name, LIMIT),
      rejected: point(m, INSTRUMENTS.admissionRejected.name, LIMIT),
      queued: point(m, INSTRUMENTS.operationQueued.name, SERIES),
      running: point(m, INSTRUMENTS.operationActive.name, SERIES),
      queueWaits: histogramCount(m, INSTRUMENTS.operationQueueDuration.name, SERIES),
      ok: histogramCount(m, INSTRUMENTS.operationDuration.name, { ...SERIES, [ATTR_OPERATION_OUTCOME]: 'ok' }),
      error: histogramCount(m, INSTRUMENTS.operationDuration.name, { ...SERIES, [ATTR_OPERATION_OUTCOME]: 'error' }),
    }).toEqual(expected);
    expect(
      histogramCount(m, INSTRUMENTS.operationDuration.name, { ...SERIES, [ATTR_OPERATION_OUTCOME]: 'cancelled' }),
    ).toBe(outcomes.cancelled);

    const last = await collectDelta();
    expect(deltaSums).toEqual({
      timeouts: seen.timedOut,
      cancelled: seen.cancelled,
      rejected: seen.rejected,
      queueWaits: measuredWaits,
      ok: outcomes.ok,
      error: outcomes.error,
    });
    expect(point(last, INSTRUMENTS.concurrencyLimit.name, LIMIT)).toBe(kind.slots());
    await meterProvider.shutdown();
  }, 120_000);
});
