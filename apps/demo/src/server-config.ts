// One resources server's settings, validated once at start. The limits are per server
// process: a fleet of N servers has N times each limit, which the summary says plainly.

import { z } from 'zod';

/** Settings of one resources server process. */
export interface ServerConfig {
  /** Server name (resource attribute `nemo.gym.server.name`); bounded by the orchestrator. */
  readonly name: string;
  /** Verifier subprocesses running at once (async-mutex Semaphore). */
  readonly verifyLimit: number;
  /** Inline tool calls running at once (p-limit). */
  readonly toolLimit: number;
  /** Judge calls waiting on the upstream at once (async-mutex Semaphore). */
  readonly judgeLimit: number;
  /** Calls allowed to wait for a verify slot; one more is refused at once (`OVERLOADED_STATUS`). */
  readonly verifyMaxQueued: number;
  /** A verify call waiting longer than this for its slot is refused (`OVERLOADED_STATUS`). */
  readonly verifyQueueTimeoutMs: number;
  readonly toolMaxQueued: number;
  readonly toolQueueTimeoutMs: number;
  readonly judgeMaxQueued: number;
  readonly judgeQueueTimeoutMs: number;
  /** A verifier running longer than this is killed and recorded as `timeout`. */
  readonly verifyTimeoutMs: number;
  /** Mean latency of the simulated judge upstream. */
  readonly judgeLatencyMs: number;
  /** Live sandbox processes allowed at once; more is a 429, not a queue. */
  readonly maxSandboxes: number;
  /** One sandbox create in this many (the first among them) fails its first attempt and is retried; 0 = never. */
  readonly sandboxCreateFailEvery: number;
  /** A client must send its request headers within this long (408 otherwise). */
  readonly headersTimeoutMs: number;
  /** A client must send its whole request within this long (408 otherwise). */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  readonly keepAliveTimeoutMs: number;
  /** Open connections at most (node:http's `maxConnections`); beyond it new connections are dropped. */
  readonly maxConnections: number;
}

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Most verify milliseconds a server accepts; the verifier's own hang outlasts it. */
export const MAX_VERIFY_TIMEOUT_MS = 60_000;

/** Schema of {@link ServerConfig}, with the defaults a lone `node dist/server.js` gets. */
export const serverConfigSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'must be 1-32 characters of a-z, 0-9, _ or -')
      .default('resources'),
    verifyLimit: integer(1, 256).default(2),
    toolLimit: integer(1, 256).default(4),
    judgeLimit: integer(1, 256).default(2),
    verifyMaxQueued: integer(0, 10_000).default(16),
    verifyQueueTimeoutMs: integer(1, 600_000).default(750),
    toolMaxQueued: integer(0, 10_000).default(32),
    toolQueueTimeoutMs: integer(1, 600_000).default(500),
    judgeMaxQueued: integer(0, 10_000).default(16),
    judgeQueueTimeoutMs: integer(1, 600_000).default(500),
    verifyTimeoutMs: integer(10, MAX_VERIFY_TIMEOUT_MS).default(400),
    judgeLatencyMs: integer(0, 10_000).default(40),
    maxSandboxes: integer(0, 64).default(4),
    sandboxCreateFailEvery: integer(0, 1_000_000).default(10),
    headersTimeoutMs: integer(50, 60_000).default(5_000),
    requestTimeoutMs: integer(50, 300_000).default(10_000),
    keepAliveTimeoutMs: integer(50, 60_000).default(5_000),
    maxConnections: integer(1, 65_536).default(4_096),
  })
  .refine((config) => config.requestTimeoutMs >= config.headersTimeoutMs, {
    message: 'must be at least the headers timeout',
    path: ['requestTimeoutMs'],
  });
