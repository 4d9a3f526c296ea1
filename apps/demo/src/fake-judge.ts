// The judge a resources server calls: a fake judge model behind HTTP, on 127.0.0.1, started
// by each resources server for itself. It answers POST /score after a simulated latency
// (half to one and a half times the mean) and fails one call in FAIL_EVERY with a 503, as a
// flaky model endpoint would. The resources server calls it over a real undici Pool with
// fewer connections than its judge gate admits at once, so under load calls queue for a
// connection and `@gym/http-pool` has waits to show.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { HttpError } from './http-error.js';
import { readJsonBody } from './read-body.js';

/** One upstream call in this many fails, as a flaky model endpoint would. */
const FAIL_EVERY = 40;

/** Body of POST /score (and of the resources server's POST /judge). */
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

/** A running fake judge. */
export interface FakeJudge {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  close(): Promise<void>;
}

/** Starts the fake judge on a free loopback port. */
export async function startFakeJudge(latencyMs: number): Promise<FakeJudge> {
  let calls = 0;
  const server: Server = createServer((req, res) => {
    const answer = (status: number, body: unknown) => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/score') return answer(404, { error: 'POST /score only' });
      const body = await readJsonBody(req, judgeBodySchema);
      calls++;
      await sleep(latencyMs * (0.5 + Math.random()), undefined, { signal: gone.signal });
      if (calls % FAIL_EVERY === 0) return answer(503, { error: 'simulated outage' });
      answer(200, { score: overlapScore(body.prompt, body.response) });
    })().catch((error: unknown) => {
      answer(error instanceof HttpError ? error.status : 500, { error: String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
}
