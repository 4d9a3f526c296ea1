// Closed-loop load: a fixed number of workers per route and server, each sending its next
// request when the previous one answered. More verify workers than verify slots is the
// point: with a small limit the extra workers wait in the queue, so queue time grows while
// run time stays what the verifier needs. A few verifies hang or crash on purpose, early
// enough that a short run shows both outcomes. Rollout workers drive episodes the way a
// rollout driver does (a tool call, then a verify of the answer, each sent again after a refusal)
// and report each finished episode's wall time; a sandbox worker creates a sandbox, reads it,
// runs an exec in it and deletes it. An episode begun before the load's time is up is driven
// to its end (until the request cap, the caller's abort or the drain deadline), so a short run
// still finishes what it started. A server that does not answer is backed off
// from (one probe at a time, exponentially spaced), a server that is down (being restarted)
// gets no request at all, and a refusal (recognised by its `Retry-After` and body, `isOverloadRefusal`) is honoured for its `Retry-After`: a dead or overloaded
// server never meets a retry storm.

import { setMaxListeners } from 'node:events';
import { Agent, request } from 'node:http';
import { waitOrAbort } from './deadline.js';
import { isOverloadRefusal } from './http-error.js';

/** Workers per server and route. */
export interface WorkerCounts {
  readonly verify: number;
  readonly tool: number;
  readonly judge: number;
  readonly sandbox: number;
  /** Rollout workers, each driving one episode at a time (default 0). */
  readonly rollout?: number | undefined;
}

/** Default workers per server: verify well above any small limit, the others moderate. */
export const DEFAULT_WORKERS: WorkerCounts = { verify: 8, tool: 2, judge: 4, sandbox: 1, rollout: 1 };

/** One server the load is sent to. */
export interface LoadTarget {
  readonly name: string;
  /** Its base URL while it runs; undefined while it is down (no request is sent then). */
  url(): string | undefined;
}

/** What the load generator was asked to do. */
export interface LoadOptions {
  /** The servers. */
  readonly targets: readonly LoadTarget[];
  readonly durationMs: number;
  /** Total request cap across every worker; undefined = none. */
  readonly maxRequests: number | undefined;
  readonly workers: WorkerCounts;
  /** Aborting it stops the load at once (in-flight requests are abandoned). */
  readonly signal: AbortSignal;
  /** Called about twice a second with the running totals (not at the end: the caller gets the final totals). */
  readonly onProgress?: (stats: LoadStats) => void;
  /** Called with the wall time (ms) of every rollout that ran to its end. */
  readonly onRollout?: (ms: number) => void;
  /** Verifies sent in the first this many ms of the load ask the verifier to crash (default 0: none). */
  readonly failVerifiesMs?: number | undefined;
  /** Verifies sent in the first this many ms of the load hold their slot without running until that time is over (default 0: none). */
  readonly stallVerifiesMs?: number | undefined;
}

/** Route names as the load generator counts them. */
export const LOAD_ROUTES = ['verify', 'tool', 'judge', 'sandbox'] as const;
/** One of {@link LOAD_ROUTES}. */
export type LoadRoute = (typeof LOAD_ROUTES)[number];

/** Client-side counts per route. */
export interface RouteStats {
  requests: number;
  /** Responses by status class: `2xx`, `4xx`, `5xx`. */
  readonly statuses: Record<'2xx' | '4xx' | '5xx', number>;
  /** Requests that got no response (connection failed or abandoned). */
  failures: number;
}

/** Client-side counts per server. */
export interface ServerLoadStats {
  sent: number;
  /** Requests that got no response. */
  noAnswer: number;
  /** Overload refusals (the server shed the call), recognised by their `Retry-After` and body. */
  shed: number;
}

/** The rollout episodes the load drove. */
export interface RolloutStats {
  /** Episodes that ran to their end (the verify answered, whatever it said). */
  ended: number;
  /** Episodes begun and given up: a step got no answer, or the load ended first. */
  abandoned: number;
  /** Sum and longest of the ended episodes' wall times. */
  totalMs: number;
  longestMs: number;
}

/** Running totals. */
export interface LoadStats {
  readonly startedAt: number;
  elapsedMs: number;
  sent: number;
  completed: number;
  inFlight: number;
  /** Requests that got no response, over every route and server. */
  noAnswer: number;
  readonly routes: Record<LoadRoute, RouteStats>;
  readonly rollouts: RolloutStats;
  /** By server name. */
  readonly servers: Record<string, ServerLoadStats>;
}

/** How long the load waits for in-flight requests after the deadline before abandoning them. */
const DRAIN_MS = 5_000;
/** Pause of a tool worker between calls, so inline CPU work does not take every core. */
const TOOL_PAUSE_MS = 10;
/** How long a sandbox worker keeps its sandbox before deleting it; a Node child costs ~50 ms of CPU to start. */
const SANDBOX_HOLD_MS = 1_000;
/** SHA-256 rounds of one exec inside a sandbox, and of a rollout's tool call. */
const SANDBOX_EXEC_ROUNDS = 2_000;
const ROLLOUT_TOOL_ROUNDS = 500;

/**
 * How a request is sent. `load`: counts against the budget and stops with it. `finish`: a later
 * step of an episode already begun, sent after the load's time is up too (not past the request
 * cap, the caller's abort or the drain deadline). `cleanup`: a delete, sent whatever the budget
 * says, once, to a server that is up.
 */
type SendMode = 'load' | 'finish' | 'cleanup';

interface Response {
  readonly status: number;
  readonly body: string;
  /** Seconds of a `Retry-After` header, when there was a valid one. */
  readonly retryAfterSeconds: number | undefined;
  /** An overload refusal, recognised by what it says (`isOverloadRefusal`), not by its status. */
  readonly refused: boolean;
}

/** First pause after a server did not answer; doubled per further failure, up to the cap. */
const BACKOFF_INITIAL_MS = 100;
const BACKOFF_MAX_MS = 2_000;
/** How often a worker looks again at a server that is down. */
const DOWN_POLL_MS = 100;
/** A request unanswered for this long counts as no answer (a server that accepts but never answers). */
const REQUEST_TIMEOUT_MS = 15_000;
/** Longest `Retry-After` honoured; a server cannot park a worker for longer. */
const MAX_RETRY_AFTER_MS = 5_000;

/**
 * Whether a server may be sent a request now. Healthy: always. After a request that got no
 * answer: nothing until the backoff has passed, then a single probe; its answer closes the
 * breaker, its failure doubles the backoff. Failures of requests already in flight when the
 * breaker opened do not count again.
 */
class ServerHealth {
  #failures = 0;
  #blockedUntil = 0;
  #probing = false;

  /** Resolves when a request may be sent: `'go'`, `'probe'` (the one request allowed through), or `'stop'` once `over()`. */
  async admit(signal: AbortSignal, over: () => boolean): Promise<'go' | 'probe' | 'stop'> {
    for (;;) {
      if (signal.aborted || over()) return 'stop';
      if (this.#failures === 0) return 'go';
      const now = performance.now();
      if (now >= this.#blockedUntil && !this.#probing) {
        this.#probing = true;
        return 'probe';
      }
      await waitOrAbort(Math.min(DOWN_POLL_MS, Math.max(DOWN_POLL_MS / 2, this.#blockedUntil - now)), signal);
    }
  }

  answered(probe: boolean): void {
    this.#failures = 0;
    if (probe) this.#probing = false;
  }

  failed(probe: boolean): void {
    if (probe) this.#probing = false;
    const now = performance.now();
    if (!probe && now < this.#blockedUntil) return; // already known to be failing
    this.#failures++;
    const backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** (this.#failures - 1));
    this.#blockedUntil = now + backoff * (0.75 + Math.random() / 2);
  }
}

class Budget {
  #left: number;
  readonly #deadline: number;
  readonly #signal: AbortSignal;
  constructor(maxRequests: number | undefined, deadline: number, signal: AbortSignal) {
    this.#left = maxRequests ?? Number.POSITIVE_INFINITY;
    this.#deadline = deadline;
    this.#signal = signal;
  }
  /** True once time, count or the signal ran out. */
  get over(): boolean {
    return this.exhausted || performance.now() >= this.#deadline;
  }
  /** True once the count or the signal ran out (the time does not end an episode already begun). */
  get exhausted(): boolean {
    return this.#signal.aborted || this.#left <= 0;
  }
  /** Takes one request from the budget; false once time, count or the signal ran out (`finish`: count or signal). */
  take(mode: 'load' | 'finish' = 'load'): boolean {
    if (mode === 'load' ? this.over : this.exhausted) return false;
    this.#left--;
    return true;
  }
}

/** Drives the servers until the duration, the request cap or the signal ends it; resolves with the totals. */
export async function runLoad(options: LoadOptions): Promise<LoadStats> {
  const startedAt = performance.now();
  const routes = Object.fromEntries(
    LOAD_ROUTES.map((route) => [route, { requests: 0, statuses: { '2xx': 0, '4xx': 0, '5xx': 0 }, failures: 0 }]),
  ) as Record<LoadRoute, RouteStats>;
  const servers = Object.fromEntries(
    options.targets.map((target) => [target.name, { sent: 0, noAnswer: 0, shed: 0 }]),
  ) as Record<string, ServerLoadStats>;
  const stats: LoadStats = {
    startedAt,
    elapsedMs: 0,
    sent: 0,
    completed: 0,
    inFlight: 0,
    noAnswer: 0,
    routes,
    rollouts: { ended: 0, abandoned: 0, totalMs: 0, longestMs: 0 },
    servers,
  };
  // Our own signals, chained to the caller's: every worker and request listens to them, far more than Node's default of 10 listeners.
  const stop = new AbortController();
  // In-flight requests are abandoned on abort, or DRAIN_MS after the deadline.
  const abandon = new AbortController();
  setMaxListeners(0, stop.signal, abandon.signal);
  const onAbort = (): void => {
    stop.abort();
    abandon.abort();
  };
  if (options.signal.aborted) onAbort();
  options.signal.addEventListener('abort', onAbort, { once: true });
  const budget = new Budget(options.maxRequests, startedAt + options.durationMs, stop.signal);
  const drainTimer = setTimeout(() => abandon.abort(), options.durationMs + DRAIN_MS);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const failUntil = startedAt + (options.failVerifiesMs ?? 0);
  const stallUntil = startedAt + (options.stallVerifiesMs ?? 0);
  /** The n-th verify's body; one sent in the failing window crashes, one sent in the stalling window holds its slot until it ends. */
  const verifyFor = (n: number): Record<string, unknown> => {
    const now = performance.now();
    return verifyBody(n, now < failUntil, Math.max(0, Math.ceil(stallUntil - now)));
  };

  /**
   * Sends one request to `target` when it may be sent one and the budget allows (false when the
   * load is over). Waits while the server is down or backed off; honours a refusal's Retry-After.
   */
  const send = async (
    target: LoadTarget,
    health: ServerHealth,
    route: LoadRoute,
    method: string,
    path: string,
    body?: unknown,
    mode: SendMode = 'load',
  ): Promise<Response | false | undefined> => {
    const cleanup = mode === 'cleanup';
    // An episode's later steps end with the drain deadline (or the caller's abort), not with the load's time.
    const signal = mode === 'load' ? stop.signal : abandon.signal;
    const over = (): boolean => (mode === 'load' ? budget.over : budget.exhausted || abandon.signal.aborted);
    let admission: 'go' | 'probe' | 'stop';
    let base: string | undefined;
    for (;;) {
      // A server that is down or backed off is waited for only while the load (or the episode) lasts.
      if (!cleanup && over()) return false;
      admission = cleanup ? 'go' : await health.admit(signal, over);
      if (admission === 'stop') return false;
      base = target.url();
      if (base !== undefined) break;
      if (admission === 'probe') health.answered(true); // nothing was sent; a new process gets a fresh start
      if (cleanup) return undefined;
      await waitOrAbort(DOWN_POLL_MS, signal);
    }
    if (!cleanup && !budget.take(mode === 'finish' ? 'finish' : 'load')) {
      if (admission === 'probe') health.failed(true);
      return false;
    }
    const probe = admission === 'probe';
    const counts = routes[route];
    const server = servers[target.name] as ServerLoadStats;
    counts.requests++;
    server.sent++;
    stats.sent++;
    stats.inFlight++;
    try {
      const response = await call(agent, method, `${base}${path}`, body, abandon.signal);
      const status = response.status;
      counts.statuses[status >= 500 ? '5xx' : status >= 400 ? '4xx' : '2xx']++;
      health.answered(probe);
      if (response.refused) {
        server.shed++;
        const pause = Math.min(MAX_RETRY_AFTER_MS, (response.retryAfterSeconds ?? 1) * 1000);
        if (!cleanup) await waitOrAbort(pause, signal);
      }
      return response;
    } catch {
      counts.failures++;
      server.noAnswer++;
      stats.noAnswer++;
      if (!abandon.signal.aborted) health.failed(probe);
      return undefined;
    } finally {
      stats.inFlight--;
      stats.completed++;
    }
  };

  const workers: Promise<void>[] = [];
  for (const target of options.targets) {
    const health = new ServerHealth();
    const verifyCounter = { next: 0 };
    const serverIndex = workers.length;
    for (let i = 0; i < options.workers.verify; i++) workers.push(verifyWorker(target, health, verifyCounter));
    for (let i = 0; i < options.workers.tool; i++) workers.push(toolWorker(target, health, serverIndex * 1000 + i));
    for (let i = 0; i < options.workers.judge; i++) workers.push(judgeWorker(target, health));
    for (let i = 0; i < options.workers.sandbox; i++) workers.push(sandboxWorker(target, health));
    for (let i = 0; i < (options.workers.rollout ?? 0); i++) {
      workers.push(rolloutWorker(target, health, verifyCounter, serverIndex * 1000 + i));
    }
  }

  /** Sends one step of an episode, again after each refusal (whose Retry-After `send` honoured). */
  async function step(
    target: LoadTarget,
    health: ServerHealth,
    mode: 'load' | 'finish',
    route: LoadRoute,
    path: string,
    body: unknown,
  ): Promise<Response | false | undefined> {
    for (;;) {
      const answer = await send(target, health, route, 'POST', path, body, mode);
      if (answer === false || answer === undefined || !answer.refused) return answer;
    }
  }

  /**
   * One rollout after another: a tool call, then a verify of the answer. The episode's wall
   * time, refusals and their Retry-After included, is reported once the verify answered (whatever
   * it said); an episode whose step got no answer, or that the load ended, is abandoned.
   */
  async function rolloutWorker(
    target: LoadTarget,
    health: ServerHealth,
    counter: { next: number },
    seed: number,
  ): Promise<void> {
    for (let n = 0; ; n++) {
      const started = performance.now();
      const tool = await step(target, health, 'load', 'tool', '/tool', {
        tool: 'sha256',
        input: `rollout-${seed}-${n}`,
        rounds: ROLLOUT_TOOL_ROUNDS,
      });
      if (tool === false) return;
      if (tool === undefined) {
        stats.rollouts.abandoned++;
        continue;
      }
      const verify = await step(target, health, 'finish', 'verify', '/verify', verifyFor(counter.next++));
      if (verify === false || verify === undefined) {
        stats.rollouts.abandoned++;
        if (verify === false) return;
        continue;
      }
      const ms = performance.now() - started;
      stats.rollouts.ended++;
      stats.rollouts.totalMs += ms;
      stats.rollouts.longestMs = Math.max(stats.rollouts.longestMs, ms);
      options.onRollout?.(ms);
    }
  }

  async function verifyWorker(target: LoadTarget, health: ServerHealth, counter: { next: number }): Promise<void> {
    for (;;) {
      const n = counter.next++;
      if ((await send(target, health, 'verify', 'POST', '/verify', verifyFor(n))) === false) return;
    }
  }

  async function toolWorker(target: LoadTarget, health: ServerHealth, seed: number): Promise<void> {
    for (let n = 0; ; n++) {
      const body =
        n % 4 === 3
          ? { tool: 'word_count', input: 'the quick brown fox jumps over the lazy dog '.repeat(1 + (n % 8)) }
          : { tool: 'sha256', input: `input-${seed}-${n}`, rounds: 200 + (n % 5) * 100 };
      if ((await send(target, health, 'tool', 'POST', '/tool', body)) === false) return;
      await waitOrAbort(TOOL_PAUSE_MS, stop.signal);
    }
  }

  async function judgeWorker(target: LoadTarget, health: ServerHealth): Promise<void> {
    for (;;) {
      const sent = await send(target, health, 'judge', 'POST', '/judge', {
        prompt: 'Explain why the sky is blue in one sentence.',
        response: 'Sunlight scatters off air molecules, and blue light scatters most, so the sky looks blue.',
      });
      if (sent === false) return;
    }
  }

  async function sandboxWorker(target: LoadTarget, health: ServerHealth): Promise<void> {
    for (let n = 0; ; n++) {
      const base = target.url();
      const created = await send(target, health, 'sandbox', 'POST', '/sandboxes', {
        cpu: 0.1,
        memoryMib: 24,
        lifetimeMs: 5000,
      });
      if (created === false) return;
      if (created?.status !== 201) {
        await waitOrAbort(250, stop.signal);
        continue;
      }
      const { id } = JSON.parse(created.body) as { id: string };
      // A sandbox that was made is read and used even when the load's time runs out meanwhile.
      if (!budget.over) await waitOrAbort(SANDBOX_HOLD_MS / 2, stop.signal);
      const read = await send(target, health, 'sandbox', 'GET', `/sandboxes/${id}`, undefined, 'finish');
      if (read !== false && target.url() === base) {
        const upload = { name: 'task.txt', content: `sandbox-${n}` };
        await send(target, health, 'sandbox', 'POST', `/sandboxes/${id}/file`, upload, 'finish');
        const exec = { input: `sandbox-${n}`, rounds: SANDBOX_EXEC_ROUNDS };
        await send(target, health, 'sandbox', 'POST', `/sandboxes/${id}/exec`, exec, 'finish');
      }
      if (!budget.over) await waitOrAbort(SANDBOX_HOLD_MS / 2, stop.signal);
      // The delete is cleanup, not load: it is sent even when the budget ran out, and only to
      // the process that made the sandbox (a restarted server does not know it).
      if (target.url() === base)
        await send(target, health, 'sandbox', 'DELETE', `/sandboxes/${id}`, undefined, 'cleanup');
    }
  }

  const progress = setInterval(() => {
    stats.elapsedMs = performance.now() - startedAt;
    options.onProgress?.(stats);
  }, 500);
  try {
    await Promise.all(workers);
  } finally {
    clearInterval(progress);
    clearTimeout(drainTimer);
    options.signal.removeEventListener('abort', onAbort);
    agent.destroy();
  }
  stats.elapsedMs = performance.now() - startedAt;
  return stats;
}

/**
 * The n-th verify request of a server: every fifth answer is wrong (a completed verify that
 * did not pass), request 2 and then one in 150 crash, request 4 and then one in 150 hang;
 * every one crashes when `failing` (the `--fail-verifies-ms` window).
 */
export function verifyBody(n: number, failing = false, stallMs = 0): Record<string, unknown> {
  const mode = failing || n === 2 || n % 150 === 77 ? 'crash' : n === 4 || n % 150 === 127 ? 'hang' : 'normal';
  const expected = `answer-${n % 13}`;
  const body = { answer: n % 5 === 3 ? 'wrong' : expected, expected, workMs: 10 + ((n * 7) % 25), mode };
  return stallMs > 0 ? { ...body, stallMs } : body;
}

/** The `stallMs` of a request body, 0 when it has none. */
function stallOf(body: unknown): number {
  const stallMs = (body as { stallMs?: unknown } | undefined)?.stallMs;
  return typeof stallMs === 'number' ? stallMs : 0;
}

function call(agent: Agent, method: string, url: string, body: unknown, signal: AbortSignal): Promise<Response> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      url,
      {
        method,
        agent,
        // A stalled verify (`stallMs`, the fault) is given its stall on top of the usual wait.
        signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS + stallOf(body))]),
        headers:
          payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          const header = res.headers['retry-after'];
          const retryAfter = Number(header);
          resolve({
            status: res.statusCode ?? 0,
            body: text,
            retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined,
            refused: isOverloadRefusal(header, text),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
