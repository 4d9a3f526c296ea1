// Stress: 16,384 operations through a limit of 64, with a seeded random mix of return, throw,
// `timeout`, `crashed`, abort-while-queued and abort-while-running. Afterwards every slot is
// free, queued = active = 0, the duration histogram's count per outcome equals what the test
// itself saw happen, and the queue histogram counted every operation exactly once.
// Steps are `setImmediate` turns, never wall-clock time, so the run is the same on any machine.

import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OPERATION_OUTCOME,
  INSTRUMENTS,
  OUTCOMES,
  type Outcome,
} from '@gym/constants';
import { type OperationLimit, resourcesOperation } from '@gym/operations';
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
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { countingLimit, prng } from './helpers.js';

const OPERATIONS = 16_384;
const LIMIT = 64;
const SEED = 0x9e3779b9;
const SERIES = { [ATTR_OPERATION]: 'verify', [ATTR_EXECUTOR]: 'subprocess' };

const KINDS = ['return', 'throw', 'timeout', 'crashed', 'abortWhileQueued', 'abortWhileRunning'] as const;
type Kind = (typeof KINDS)[number];

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe.each<[string, () => { limit: OperationLimit; isFree: () => boolean }]>([
  [
    'async-mutex Semaphore(64)',
    () => {
      const s = new Semaphore(LIMIT);
      return { limit: s, isFree: () => s.getValue() === LIMIT };
    },
  ],
  [
    'p-limit(64)',
    () => {
      const l = pLimit(LIMIT);
      return { limit: l, isFree: () => l.activeCount === 0 && l.pendingCount === 0 };
    },
  ],
  [
    'acquire()/release() object of 64',
    () => {
      const c = countingLimit(LIMIT);
      return { limit: c, isFree: () => c.free === LIMIT };
    },
  ],
])('stress through %s', (_name, makeLimit) => {
  it(`${OPERATIONS} operations of a random mix leave every slot free, the counts at 0 and the histograms exact`, async () => {
    const random = prng(SEED);
    const { meterProvider: provider, reader } = createMetricHarness();
    const { limit, isFree } = makeLimit();
    const options = { operation: 'verify', executor: 'subprocess', meterProvider: provider } as const;

    const expectedRuns: Record<Outcome, number> = { ok: 0, error: 0, timeout: 0, cancelled: 0, crashed: 0 };
    let running = 0;
    let maxRunning = 0;
    let neverStarted = 0;
    let wrongResults = 0;
    const kindsDrawn = new Set<Kind>();
    const done: Promise<void>[] = [];

    for (let i = 0; i < OPERATIONS; i++) {
      const kind = KINDS[Math.floor(random() * KINDS.length)]!;
      kindsDrawn.add(kind);
      const steps = 1 + Math.floor(random() * 3);
      const throwAfterSetting = random() < 0.5;
      const abortAfterTurns = Math.floor(random() * 4);
      const controller = kind.startsWith('abort') ? new AbortController() : undefined;
      const error = new Error(`op ${i}`);
      let started = false;
      let endedAs: Outcome | undefined;

      const body = async (op: { outcome: Outcome | undefined; readonly signal: AbortSignal | undefined }) => {
        started = true;
        running++;
        maxRunning = Math.max(maxRunning, running);
        try {
          if (kind === 'abortWhileRunning') setImmediate(() => controller!.abort(error));
          for (let s = 0; s < steps || kind === 'abortWhileRunning'; s++) {
            await turn();
            if (op.signal?.aborted) {
              endedAs = 'cancelled';
              throw op.signal.reason;
            }
          }
          switch (kind) {
            case 'throw':
              endedAs = 'error';
              throw error;
            case 'timeout':
            case 'crashed':
              op.outcome = kind;
              endedAs = kind;
              if (throwAfterSetting) throw error;
              return i;
            default:
              endedAs = 'ok';
              return i;
          }
        } finally {
          running--;
        }
      };

      const settled = capture(resourcesOperation(limit, { ...options, signal: controller?.signal }, body));
      if (kind === 'abortWhileQueued') {
        // Abort after a few turns: usually still queued; if it already started, it is a running abort.
        void (async () => {
          for (let t = 0; t < abortAfterTurns; t++) await turn();
          controller!.abort(error);
        })();
      }
      done.push(
        settled.then((result) => {
          if (!started) {
            neverStarted++;
            if (result.ok || result.error !== error) wrongResults++;
            return;
          }
          expectedRuns[endedAs!]++;
          const returned = endedAs === 'ok' || ((endedAs === 'timeout' || endedAs === 'crashed') && !throwAfterSetting);
          if (returned ? !(result.ok && result.value === i) : result.ok || result.error !== error) wrongResults++;
        }),
      );
    }

    // Midway: the limit holds, and the exported live counts say so.
    for (let t = 0; t < 50; t++) await turn();
    const midway = await collectMetrics(reader);
    expect(counterValue(midway, INSTRUMENTS.operationActive.name, SERIES)).toBeLessThanOrEqual(LIMIT);
    expect(counterValue(midway, INSTRUMENTS.operationQueued.name, SERIES)).toBeGreaterThan(0);

    await Promise.all(done);
    for (let t = 0; t < 5; t++) await turn(); // let p-limit reach and drop the last abandoned entries

    expect(kindsDrawn.size).toBe(KINDS.length);
    expect(wrongResults).toBe(0);
    expect(maxRunning).toBeLessThanOrEqual(LIMIT);
    expect(maxRunning).toBe(LIMIT);
    expect(neverStarted).toBeGreaterThan(0);
    expect(expectedRuns.cancelled).toBeGreaterThan(0);
    expect(isFree()).toBe(true);

    const m = await collectMetrics(reader);
    expect(counterValue(m, INSTRUMENTS.operationQueued.name, SERIES)).toBe(0);
    expect(counterValue(m, INSTRUMENTS.operationActive.name, SERIES)).toBe(0);
    expect(histogramCount(m, INSTRUMENTS.operationQueueDuration.name)).toBe(OPERATIONS);
    const exportedRuns = Object.fromEntries(
      OUTCOMES.map((o) => [
        o,
        pointsOf<Histogram>(m, INSTRUMENTS.operationDuration.name).find((p) =>
          sameAttributes(p.attributes, { ...SERIES, [ATTR_OPERATION_OUTCOME]: o }),
        )?.value.count ?? 0,
      ]),
    );
    expect(exportedRuns).toEqual(expectedRuns);
    expect(histogramCount(m, INSTRUMENTS.operationDuration.name)).toBe(OPERATIONS - neverStarted);
  }, 120_000); // a failure guard: a loaded machine takes several times as long as an idle one
});
