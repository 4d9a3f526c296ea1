// POST /judge: waits on a simulated slow upstream (a judge model behind a network) under
// its own async-mutex Semaphore, executor `inline` (the wait happens on the event loop),
// behind admission control.
// The upstream fails one call in FAIL_EVERY, so `error` shows up as an outcome too.

import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { type AdmissionSettings, createSemaphoreGate, type Gate } from '../admission.js';
import type { Route } from '../http-app.js';
import { HttpError } from '../http-error.js';
import { readJsonBody } from '../read-body.js';

/** One upstream call in this many fails, as a flaky model endpoint would. */
const FAIL_EVERY = 40;

/** Body of POST /judge. */
export const judgeBodySchema = z.strictObject({
  prompt: z.string().min(1).max(8192),
  response: z.string().max(8192),
});

/** Share of the prompt's distinct words that the response repeats: a stand-in for a judge's score. */
export function overlapScore(prompt: string, response: string): number {
  const words = (value: string) => new Set(value.toLowerCase().match(/[a-z0-9]+/g) ?? []);
  const wanted = words(prompt);
  if (wanted.size === 0) return 0;
  const given = words(response);
  let hits = 0;
  for (const word of wanted) if (given.has(word)) hits++;
  return hits / wanted.size;
}

/** The judge route and its gate (exposed for GET /limits). */
export function createJudgeRoute(
  limit: number,
  latencyMs: number,
  admission: AdmissionSettings,
): { route: Route; gate: Gate } {
  const gate = createSemaphoreGate(limit, {
    operation: 'judge',
    executor: 'inline',
    limitName: 'judge_slots',
    ...admission,
  });
  let calls = 0;
  const route: Route = {
    method: 'POST',
    path: '/judge',
    async handle(req, signal) {
      const body = await readJsonBody(req, judgeBodySchema);
      const score = await gate.run(signal, async () => {
        calls++;
        // Latency between half and one and a half times the mean; sleep rejects with an AbortError if the client leaves.
        await sleep(latencyMs * (0.5 + Math.random()), undefined, { signal });
        if (calls % FAIL_EVERY === 0) throw new HttpError(502, 'the judge upstream answered 503 (simulated outage)');
        return overlapScore(body.prompt, body.response);
      });
      return { status: 200, body: { score } };
    },
  };
  return { route, gate };
}
