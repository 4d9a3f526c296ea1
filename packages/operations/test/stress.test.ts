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
import { resourcesOperation } from '@gym/operations';
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
import { prng } from './helpers.js';
import { KINDS } from './kinds.js';

const OPERATIONS = 16_384;
const LIMIT = 64;
const SEED = 0x9e3779b9;
const SERIES = { [ATTR_OPERATION]: 'verify', [ATTR_EXECUTOR]: 'subprocess' };

const ENDINGS = ['return', 'throw', 'timeout', 'crashed', 'abortWhileQueued', 'abortWhileRunning'] as const;
type Ending = (typeof ENDINGS)[number];

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

// Every kind that can have 64 slots.
describe.each(KINDS.filter((kind) => kind.sized).map((kind) => [kind.name, kind] as const))(
  'stress through %s',
  (_name, kind) => {
    it(`${OPERATIONS} operations of a random mix leave every slot free, the counts at 0 and the histograms exact`, async () => {
      const random = prng(SEED);
      const { meterProvider: provider, reader } = createMetricHarness();
      const { limit, isFree } = kind.make(LIMIT);
      const options = { operation: 'verify', executor: 'subprocess', meterProvider: provider } as const;

      const expectedRuns: Record<Outcome, number> = { ok: 0, error: 0, timeout: 0, cancelled: 0, crashed: 0 };
      let running = 0;
      let maxRunning = 0;
      let neverStarted = 0;
      let wrongResults = 0;
      const endingsDrawn = new Set<Ending>();
      const done: Promise<void>[] = [];

      for (let i = 0; i < OPERATIONS; i++) {
        const ending = ENDINGS[Math.floor(random() * ENDINGS.length)]!;
        endingsDrawn.add(ending);
        const steps = 1 + Math.floor(random() * 3);
        const throwAfterSetting = random() < 0.5;
        const abortAfterTurns = Math.floor(random() * 4);
        const controller = ending.startsWith('abort') ? new AbortController() : undefined;
        const error = new Error(`op ${i}`);
        let started = false;
        let endedAs: Outcome | undefined;

        const body = async (op: { outcome: Outcome | undefined; readonly signal: AbortSignal | undefined }) => {
          started = true;
          running++;
          maxRunning = Math.max(maxRunning, running);
          try {
            if (ending === 'abortWhileRunning') setImmediate(() => controller!.abort(error));
            for (let s = 0; s < steps || ending === 'abortWhileRunning'; s++) {
              await turn();
              if (op.signal?.aborted) {
                endedAs = 'cancelled';
                throw op.signal.reason;
              }
            }
            switch (ending) {
              case 'throw':
                endedAs = 'error';
                throw error;
              case 'timeout':
              case 'crashed':
                op.outcome = ending;
                endedAs = ending;
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
        if (ending === 'abortWhileQueued') {
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
            const returned =
              endedAs === 'ok' || ((endedAs === 'timeout' || endedAs === 'crashed') && !throwAfterSetting);
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

      expect(endingsDrawn.size).toBe(ENDINGS.length);
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
  },
);
