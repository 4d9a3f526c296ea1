// POST /verify: a real verifier subprocess under an async-mutex Semaphore, executor
// `subprocess`, behind admission control (a bounded queue and a queue deadline: `OVERLOADED_STATUS` beyond
// them). The route only translates: the verifier decides timeout or crash, the operation
// records it, and recordVerify tallies whether a verification that ran to a result completed
// (a wrong answer is a completed verification). Calls that never ran to a result — refused,
// left by their client, failed to start — do not move `gym.verify.success_rate`.

import { setTimeout as sleep } from 'node:timers/promises';
import { recordVerify, traceVerify } from '@gym/metrics';
import { z } from 'zod';
import { type AdmissionSettings, createSemaphoreGate, type Gate } from '../admission.js';
import type { Route } from '../http-app.js';
import { clientGoneError, HttpError } from '../http-error.js';
import { readJsonBody } from '../read-body.js';
import { runVerifier } from '../verifier.js';

const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => !value.includes('\u0000'), 'must not contain NUL characters');

/** Body of POST /verify. */
export const verifyBodySchema = z.strictObject({
  answer: text(4096),
  expected: text(4096),
  workMs: z.int().min(0).max(5000).default(30),
  mode: z.enum(['normal', 'hang', 'crash']).default('normal'),
  /**
   * A fault: the call does not return before this long after it arrived; once it holds its slot
   * it keeps it until then before its verifier starts, and the verify timeout does not cover that
   * (a holder that hangs, as a verifier stuck in front of a lock would). Its client leaving ends
   * it and gives the slot back.
   */
  stallMs: z.int().min(0).max(600_000).default(0),
});

/** The verify route and its gate (exposed for GET /limits). */
export function createVerifyRoute(
  limit: number,
  timeoutMs: number,
  admission: AdmissionSettings,
): { route: Route; gate: Gate } {
  const gate = createSemaphoreGate(limit, {
    operation: 'verify',
    executor: 'subprocess',
    limitName: 'verify_slots',
    ...admission,
  });
  const route: Route = {
    method: 'POST',
    path: '/verify',
    async handle(req, signal) {
      const job = await readJsonBody(req, verifyBodySchema);
      const started = performance.now();
      // Gym's gym.verify span (group `verify`) around the call, its wait for a slot included.
      const result = await traceVerify(
        () =>
          gate.run(signal, async (op) => {
            // The stall ends stallMs after the call arrived, however long it waited for its slot.
            const stallLeft = started + job.stallMs - performance.now();
            if (stallLeft > 0)
              await sleep(stallLeft, undefined, { signal }).catch(() => Promise.reject(clientGoneError()));
            const outcome = await runVerifier(job, timeoutMs, signal);
            if (outcome.kind !== 'completed') op.outcome = outcome.kind;
            return outcome;
          }),
        { serverName: admission.serverName },
      );
      // Only here did the verification run to a result: completed, timed out or crashed.
      recordVerify(performance.now() - started, result.kind === 'completed');
      if (result.kind === 'timeout') {
        throw new HttpError(504, `the verifier ran past its ${timeoutMs} ms timeout and was killed`);
      }
      if (result.kind === 'crashed') throw new HttpError(502, `the verifier died by signal ${result.signal}`);
      return { status: 200, body: { passed: result.passed, reward: result.passed ? 1 : 0 } };
    },
  };
  return { route, gate };
}
