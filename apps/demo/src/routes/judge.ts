// POST /judge: asks the judge (a fake judge model behind HTTP, `fake-judge.ts`) under its
// own async-mutex Semaphore, executor `inline` (the wait happens on the event loop), behind
// admission control. The call goes over an undici Pool with fewer connections than the gate
// admits, so under load it queues for a connection (`@gym/http-pool` times that wait).
// The judge fails one call in 40 with a 503, so `error` shows up as an outcome too.

import type { Dispatcher } from 'undici';
import { type AdmissionSettings, createSemaphoreGate, type Gate } from '../admission.js';
import { judgeBodySchema } from '../fake-judge.js';
import type { Route } from '../http-app.js';
import { HttpError } from '../http-error.js';
import { readJsonBody } from '../read-body.js';

/** The judge route and its gate (exposed for GET /limits). `judge` is the pool to the judge. */
export function createJudgeRoute(
  limit: number,
  judge: Pick<Dispatcher, 'request'>,
  admission: AdmissionSettings,
): { route: Route; gate: Gate } {
  const gate = createSemaphoreGate(limit, {
    operation: 'judge',
    executor: 'inline',
    limitName: 'judge_slots',
    ...admission,
  });
  const route: Route = {
    method: 'POST',
    path: '/judge',
    async handle(req, signal) {
      const body = await readJsonBody(req, judgeBodySchema);
      const score = await gate.run(signal, async () => {
        // The signal aborts the call (a queued one too) if the client leaves.
        const reply = await judge.request({
          method: 'POST',
          path: '/score',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal,
        });
        const answer = (await reply.body.json()) as { score?: unknown };
        if (reply.statusCode !== 200 || typeof answer.score !== 'number') {
          throw new HttpError(502, `the judge upstream answered ${reply.statusCode} (simulated outage)`);
        }
        return answer.score;
      });
      return { status: 200, body: { score } };
    },
  };
  return { route, gate };
}
