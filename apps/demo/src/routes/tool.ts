// POST /tool: inline CPU work under a p-limit limiter, executor `inline`, behind admission
// control. The work yields to the event loop every few hundred hashes, so the limit really
// bounds how many calls share the CPU at once, and a client that leaves stops its call at
// the next yield.

import { createHash } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import pLimit from 'p-limit';
import { z } from 'zod';
import { type AdmissionSettings, createGate, type Gate } from '../admission.js';
import type { Route } from '../http-app.js';
import { clientGoneError } from '../http-error.js';
import { readJsonBody } from '../read-body.js';

/** Hash rounds between two yields to the event loop. */
const ROUNDS_PER_SLICE = 250;

/** Body of POST /tool: one of the two tools, chosen by `tool`. */
export const toolBodySchema = z.discriminatedUnion('tool', [
  z.strictObject({
    tool: z.literal('sha256'),
    input: z.string().max(8192),
    rounds: z.int().min(1).max(200_000).default(1000),
  }),
  z.strictObject({ tool: z.literal('word_count'), input: z.string().max(32_768) }),
]);

/** The tool route and its gate (exposed for GET /limits). */
export function createToolRoute(limit: number, admission: AdmissionSettings): { route: Route; gate: Gate } {
  const gate = createGate(pLimit(limit), {
    operation: 'tool',
    executor: 'inline',
    limitName: 'tool_slots',
    capacity: limit,
    kind: `p-limit(${limit})`,
    ...admission,
  });
  const route: Route = {
    method: 'POST',
    path: '/tool',
    async handle(req, signal) {
      const call = await readJsonBody(req, toolBodySchema);
      const result = await gate.run(signal, async () => {
        if (call.tool === 'word_count') {
          return { words: call.input.split(/\s+/).filter((word) => word !== '').length };
        }
        let digest: Buffer = Buffer.from(call.input, 'utf8');
        for (let round = 1; round <= call.rounds; round++) {
          digest = createHash('sha256').update(digest).digest();
          if (round % ROUNDS_PER_SLICE === 0) {
            await yieldToLoop();
            if (signal.aborted) throw clientGoneError();
          }
        }
        return { digest: digest.toString('hex') };
      });
      return { status: 200, body: result };
    },
  };
  return { route, gate };
}
