// The orchestrator's command line. Every flag has a default that finishes in well under a
// minute on two cores, and every bad value is refused with the flag, the value and the
// allowed range, before anything is spawned.

import { parseArgs } from 'node:util';
import { z } from 'zod';
import { OVERLOADED_STATUS } from './http-error.js';

/** Settings of one demo run. */
export interface DemoOptions {
  /** Resources server processes to spawn. */
  readonly servers: number;
  /** Verify slots per server (the async-mutex Semaphore the demo is about). */
  readonly limit: number;
  /** Tool slots per server (p-limit). */
  readonly toolLimit: number;
  /** Judge slots per server (async-mutex Semaphore). */
  readonly judgeLimit: number;
  /** Seconds of load. */
  readonly duration: number;
  /** Stop after this many requests in total (whichever of this and `duration` comes first); undefined = no cap. */
  readonly requests?: number | undefined;
  /** A verifier running longer than this is killed (`timeout`). */
  readonly verifyTimeoutMs: number;
  /** Verifies sent in the first this many ms of the load crash on purpose (0: none). */
  readonly failVerifiesMs: number;
  /** Verifies sent in the first this many ms of the load hold their slot without running until that time is over (0: none). */
  readonly stallVerifiesMs: number;
  /** Calls allowed to wait for a verify slot, per server; beyond it refused at once (`OVERLOADED_STATUS`). */
  readonly maxQueued: number;
  /** A verify call waiting longer than this for its slot is refused (`OVERLOADED_STATUS`). */
  readonly queueTimeoutMs: number;
  readonly toolMaxQueued: number;
  readonly toolQueueTimeoutMs: number;
  readonly judgeMaxQueued: number;
  readonly judgeQueueTimeoutMs: number;
  /** Restarts allowed per server when one dies. */
  readonly restarts: number;
  /** Wait before a dead server's first restart; doubled for each further one (at most 4 s or this). */
  readonly restartBackoffMs: number;
  /** Write a Prometheus file_sd JSON list of every metrics endpoint here, once the fleet is up. */
  readonly targetsFile?: string | undefined;
  /** A server that does not answer its health check (`GET /healthz`) for this long is hung: killed and restarted. */
  readonly hungAfterMs: number;
  /** Keep the fleet up this many seconds after the summary (for a Prometheus to scrape); a signal ends it early. */
  readonly linger: number;
  /** Start the installed Prometheus with the @gym/dashboards rules, scraping the fleet. */
  readonly prometheus: boolean;
}

/** The result of parsing: run, print help, or refuse. */
export type ParsedCommandLine =
  | { readonly kind: 'run'; readonly options: DemoOptions }
  | { readonly kind: 'help' }
  | { readonly kind: 'error'; readonly message: string };

/** The --help text. */
export const HELP = `Usage: npm run demo -- [options]
       node apps/demo/dist/orchestrator.js [options]

Spawns a fleet of fake resources servers doing real bounded work, drives them with a load
generator, and prints per operation how long calls waited for their limit (queue) against
how long they ran (run), read from each server's Prometheus endpoint.

Options:
  --servers <n>            resources server processes (1-16, default 3)
  --limit <n>              verify slots per server: the async-mutex Semaphore in front of
                           the verifier subprocess (1-64, default 2)
  --tool-limit <n>         tool slots per server, p-limit (1-64, default 4)
  --judge-limit <n>        judge slots per server, async-mutex Semaphore (1-64, default 2)
  --duration <seconds>     length of the load (1-300, default 10)
  --requests <n>           stop the load after n requests in total (default: no cap)
  --verify-timeout-ms <ms> kill a verifier after this long: outcome "timeout" (50-60000, default 400)
  --fail-verifies-ms <ms>  every verify sent in the first ms of the load crashes on purpose
                           (outcome "crashed"), then verifies recover (0-600000, default 0)
  --stall-verifies-ms <ms> every verify sent in the first ms of the load holds its slot without
                           running until that time is over (the limit is stuck: its holders
                           hang, its queue does not move), then verifies recover (0-600000, default 0)
  --max-queued <n>         verify calls allowed to wait for a slot, per server; one more gets
                           ${OVERLOADED_STATUS} with Retry-After at once (0-10000, default 16)
  --queue-timeout-ms <ms>  a verify call waiting longer than this gets ${OVERLOADED_STATUS} (1-600000, default 750)
  --tool-max-queued <n>    the same for tool calls (default 32)
  --tool-queue-timeout-ms <ms>  (default 500)
  --judge-max-queued <n>   the same for judge calls (default 16)
  --judge-queue-timeout-ms <ms> (default 500)
  --restarts <n>           restarts allowed per server when one dies, with backoff
                           (0-10, default 3); a death makes the exit status 3 either way
  --restart-backoff-ms <ms>  wait before the first restart, doubled for each further one
                           (0-60000, default 250; at most 4 s apart unless this is longer)
  --hung-after-ms <ms>     a server that answers no health check (GET /healthz, 2 s deadline,
                           every second; a late answer counts) for this long of the orchestrator's
                           own running time is reported hung, killed and restarted
                           (1000-600000, default 6000); it makes the exit status 3
  --targets-file <path>    write the fleet's metrics endpoints there as Prometheus file_sd JSON
  --linger <seconds>       keep the fleet up after the summary so a Prometheus can scrape it;
                           Ctrl-C or SIGTERM ends it early (0-600, default 0)
  --prometheus             start the Prometheus installed here (on PATH) on 127.0.0.1 with the
                           @gym/dashboards recording and alert rules, scraping the fleet
                           through its file_sd targets; prints its URL (add --linger to look)
  -h, --help               show this help

Telemetry: on by default with a Prometheus endpoint per process on 127.0.0.1 (the
orchestrator's carries gym_servers_active). With OTEL_EXPORTER_OTLP_ENDPOINT set, metrics
and traces go there over OTLP instead. NEMO_GYM_OTEL_* variables you set are kept.

Exit status: 0 done; 1 the demo failed; 2 bad options; 3 a server died or hung unexpectedly,
or did not answer at the end (even if it was restarted; the summary says which, when and what
was lost); 130 interrupted.
`;

const integer = (flag: string, min: number, max: number) =>
  z.coerce
    .number({ error: `${flag} must be a number` })
    .int(`${flag} must be a whole number`)
    .min(min, `${flag} must be at least ${min}`)
    .max(max, `${flag} must be at most ${max}`);

const schema = z.object({
  servers: integer('--servers', 1, 16).default(3),
  limit: integer('--limit', 1, 64).default(2),
  toolLimit: integer('--tool-limit', 1, 64).default(4),
  judgeLimit: integer('--judge-limit', 1, 64).default(2),
  duration: integer('--duration', 1, 300).default(10),
  requests: integer('--requests', 1, 10_000_000).optional(),
  verifyTimeoutMs: integer('--verify-timeout-ms', 50, 60_000).default(400),
  failVerifiesMs: integer('--fail-verifies-ms', 0, 600_000).default(0),
  stallVerifiesMs: integer('--stall-verifies-ms', 0, 600_000).default(0),
  maxQueued: integer('--max-queued', 0, 10_000).default(16),
  queueTimeoutMs: integer('--queue-timeout-ms', 1, 600_000).default(750),
  toolMaxQueued: integer('--tool-max-queued', 0, 10_000).default(32),
  toolQueueTimeoutMs: integer('--tool-queue-timeout-ms', 1, 600_000).default(500),
  judgeMaxQueued: integer('--judge-max-queued', 0, 10_000).default(16),
  judgeQueueTimeoutMs: integer('--judge-queue-timeout-ms', 1, 600_000).default(500),
  restarts: integer('--restarts', 0, 10).default(3),
  restartBackoffMs: integer('--restart-backoff-ms', 0, 60_000).default(250),
  hungAfterMs: integer('--hung-after-ms', 1_000, 600_000).default(6_000),
  targetsFile: z.string().min(1, '--targets-file must not be empty').optional(),
  linger: integer('--linger', 0, 600).default(0),
  prometheus: z.boolean().default(false),
});

/** Parses the orchestrator's arguments (without `node` and the script). */
export function parseCommandLine(argv: readonly string[]): ParsedCommandLine {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        servers: { type: 'string' },
        limit: { type: 'string' },
        'tool-limit': { type: 'string' },
        'judge-limit': { type: 'string' },
        duration: { type: 'string' },
        requests: { type: 'string' },
        'verify-timeout-ms': { type: 'string' },
        'fail-verifies-ms': { type: 'string' },
        'stall-verifies-ms': { type: 'string' },
        'max-queued': { type: 'string' },
        'queue-timeout-ms': { type: 'string' },
        'tool-max-queued': { type: 'string' },
        'tool-queue-timeout-ms': { type: 'string' },
        'judge-max-queued': { type: 'string' },
        'judge-queue-timeout-ms': { type: 'string' },
        restarts: { type: 'string' },
        'restart-backoff-ms': { type: 'string' },
        'hung-after-ms': { type: 'string' },
        'targets-file': { type: 'string' },
        linger: { type: 'string' },
        prometheus: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return { kind: 'error', message: (error as Error).message };
  }
  if (values.help === true) return { kind: 'help' };
  const result = schema.safeParse({
    servers: values.servers,
    limit: values.limit,
    toolLimit: values['tool-limit'],
    judgeLimit: values['judge-limit'],
    duration: values.duration,
    requests: values.requests,
    verifyTimeoutMs: values['verify-timeout-ms'],
    failVerifiesMs: values['fail-verifies-ms'],
    stallVerifiesMs: values['stall-verifies-ms'],
    maxQueued: values['max-queued'],
    queueTimeoutMs: values['queue-timeout-ms'],
    toolMaxQueued: values['tool-max-queued'],
    toolQueueTimeoutMs: values['tool-queue-timeout-ms'],
    judgeMaxQueued: values['judge-max-queued'],
    judgeQueueTimeoutMs: values['judge-queue-timeout-ms'],
    restarts: values.restarts,
    restartBackoffMs: values['restart-backoff-ms'],
    hungAfterMs: values['hung-after-ms'],
    targetsFile: values['targets-file'],
    linger: values.linger,
    prometheus: values.prometheus,
  });
  if (!result.success) {
    const issue = result.error.issues[0];
    const flag = `--${String(issue?.path[0] ?? '').replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
    const given = values[flag.slice(2)];
    return { kind: 'error', message: `${issue?.message ?? 'invalid option'} (got ${JSON.stringify(given)})` };
  }
  return { kind: 'run', options: result.data };
}
