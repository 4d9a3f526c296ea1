// A fake resources server that is real where it counts: each route does bounded work
// through `resourcesOperation`, behind admission control, so its queue time, run time and
// outcomes are measured by the library under test, not by this app. Everything listens on
// loopback only, with bounded deadlines and connections (`http-limits.ts`).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHttpPoolTelemetry } from '@gym/http-pool';
import { trackInFlight } from '@gym/observer';
import { Pool } from 'undici';
import { startFakeJudge } from './fake-judge.js';
import type { Route } from './http-app.js';
import { createRequestListener, type ErrorLog } from './http-app.js';
import { httpServerOptions } from './http-limits.js';
import { createJudgeRoute } from './routes/judge.js';
import { createSandboxRoutes } from './routes/sandboxes.js';
import { createToolRoute } from './routes/tool.js';
import { createVerifyRoute } from './routes/verify.js';
import { SandboxPool } from './sandbox-pool.js';
import type { ServerConfig } from './server-config.js';

/** A running resources server. */
export interface ResourcesServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Stops accepting, drops open connections (their work is cancelled) and stops every sandbox. */
  close(): Promise<void>;
}

/** Starts a resources server on 127.0.0.1 (port 0 picks a free one). */
export async function startResourcesServer(
  config: ServerConfig,
  port: number,
  logError: ErrorLog,
): Promise<ResourcesServer> {
  const verify = createVerifyRoute(config.verifyLimit, config.verifyTimeoutMs, {
    maxQueued: config.verifyMaxQueued,
    queueTimeoutMs: config.verifyQueueTimeoutMs,
    serverName: config.name,
  });
  const tool = createToolRoute(config.toolLimit, {
    maxQueued: config.toolMaxQueued,
    queueTimeoutMs: config.toolQueueTimeoutMs,
    serverName: config.name,
  });
  // The judge this server calls, over a pool with half the connections its judge gate admits.
  const fakeJudge = await startFakeJudge(config.judgeLatencyMs);
  const connections = Math.max(1, Math.floor(config.judgeLimit / 2));
  const judgePool = new Pool(fakeJudge.origin, { connections });
  const httpPool = startHttpPoolTelemetry({ destinations: { [fakeJudge.origin]: 'judge' } });
  const judge = createJudgeRoute(config.judgeLimit, httpPool.observe(judgePool, fakeJudge.origin, { connections }), {
    maxQueued: config.judgeMaxQueued,
    queueTimeoutMs: config.judgeQueueTimeoutMs,
    serverName: config.name,
  });
  const sandboxes = new SandboxPool({ capacity: config.maxSandboxes, createFailEvery: config.sandboxCreateFailEvery });
  const routes: Route[] = [
    verify.route,
    tool.route,
    judge.route,
    ...createSandboxRoutes(sandboxes),
    {
      method: 'GET',
      path: '/healthz',
      handle: async () => ({ status: 200, body: { status: 'ok', name: config.name } }),
    },
    {
      // The limits and how full they are right now, read from their gates.
      method: 'GET',
      path: '/limits',
      handle: async () => ({
        status: 200,
        body: {
          verify: verify.gate.state(),
          tool: tool.gate.state(),
          judge: judge.gate.state(),
          sandboxes: sandboxes.usage,
          connections: await new Promise<number>((resolve) =>
            server.getConnections((error, count) => resolve(error ? -1 : count)),
          ),
        },
      }),
    },
  ];
  const server: Server = createServer(httpServerOptions(config), createRequestListener(routes, logError));
  server.maxConnections = config.maxConnections;
  trackInFlight(server, { serverName: config.name });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await Promise.all([closed, sandboxes.closeAll()]);
      httpPool.stop();
      await judgePool.destroy();
      await fakeJudge.close();
    },
  };
}
