// The load generator recognises an overload refusal by what it says (a `Retry-After` and an
// `overloaded: …` JSON error), not by its status number: 429 is also the sandbox quota's status,
// and a quota answer is no refusal to retry. Against a server on loopback that refuses every
// limited call with the server's own refusal (`overloaded()`), at 503 or at 429, and answers every
// sandbox create with the quota's message at that same status, the calls counted as shed are
// exactly the refusals, whatever the status. (Counting by status, a refusal moved to 429 was never
// counted, and an answer of the refusal's status was counted whatever it said.)

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { overloaded } from '../src/admission.js';
import { runLoad } from '../src/load-generator.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A server refusing every limited call at `status`, and answering sandbox creates with the quota's message at the same status. */
async function refusingServer(status: number): Promise<{ url: string; sent: { refusals: number; quota: number } }> {
  const sent = { refusals: 0, quota: 0 };
  const refusal = overloaded('verify_slots', 'the queue is full');
  server = createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      if (req.method === 'POST' && req.url === '/sandboxes') {
        sent.quota++;
        const body = JSON.stringify({ error: 'this server already runs its maximum of 4 sandboxes; delete one first' });
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(body);
        return;
      }
      sent.refusals++;
      res
        .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...refusal.headers })
        .end(JSON.stringify({ error: refusal.message }));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sent };
}

describe('refusals, recognised by what they say', () => {
  it.each([503, 429])(
    'counts as shed exactly the refusals, at status %i, and never a quota answer',
    async (status) => {
      const { url, sent } = await refusingServer(status);
      const load = await runLoad({
        targets: [{ name: 'refusing', url: () => url }],
        durationMs: 1_500,
        maxRequests: undefined,
        workers: { verify: 2, tool: 1, judge: 1, sandbox: 1, rollout: 1 },
        signal: new AbortController().signal,
      });
      expect(sent.refusals).toBeGreaterThan(0);
      expect(sent.quota).toBeGreaterThan(0);
      expect(load.servers.refusing?.shed).toBe(sent.refusals);
    },
    30_000,
  );
});
