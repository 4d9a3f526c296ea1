// The end-of-run summary, computed from each server's Prometheus endpoint: histogram
// buckets summed across servers (and across the processes of a restarted server), quantiles
// interpolated the way PromQL's histogram_quantile does, outcome counts read from the
// run-time histogram's count (there is no separate counter). Every call is accounted: a call
// that asked a limit has a queue wait; one that never ran (refused at admission, or its client
// left while it waited) has no run time, so it shows as `left queue`. It shows what a dashboard
// over the same metrics would show, bucket resolution included, and says which limit the
// queue time came from; then each limit's admission counts, the servers that died and what
// was lost with them.

import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OPERATION_OUTCOME,
  INSTRUMENTS,
  OPERATIONS,
  type Operation,
  OUTCOMES,
} from '@gym/constants';
import { sanitizeName } from '@gym/dashboards';
import type { GateState } from './admission.js';
import { OVERLOADED_STATUS } from './http-error.js';
import { LOAD_ROUTES, type LoadStats } from './load-generator.js';
import { histogramQuantile, type PromSample, sumBuckets } from './prometheus-text.js';

const QUEUE = sanitizeName(INSTRUMENTS.operationQueueDuration.name);
const RUN = sanitizeName(INSTRUMENTS.operationDuration.name);
const SUCCESS_RATE = sanitizeName(INSTRUMENTS.verifySuccessRate.name);
const OPERATION_LABEL = sanitizeName(ATTR_OPERATION);
const EXECUTOR_LABEL = sanitizeName(ATTR_EXECUTOR);
const OUTCOME_LABEL = sanitizeName(ATTR_OPERATION_OUTCOME);

/** One operation's figures, across the fleet. */
export interface OperationSummary {
  readonly operation: Operation;
  readonly executor: string;
  /** Calls that asked the limit (the queue histogram's count). */
  readonly calls: number;
  /** Calls that asked the limit and never ran: refused at admission, or their client left. */
  readonly leftQueue: number;
  readonly queueP50: number;
  readonly queueP99: number;
  readonly runP50: number;
  readonly runP99: number;
  readonly outcomes: ReadonlyMap<string, number>;
}

/** Per-operation figures from the scraped samples of every server (concatenated). */
export function summariseOperations(samples: readonly PromSample[]): OperationSummary[] {
  const rows: OperationSummary[] = [];
  for (const operation of OPERATIONS) {
    const mine = (labels: Readonly<Record<string, string>>): boolean => labels[OPERATION_LABEL] === operation;
    const queue = sumBuckets(samples, QUEUE, mine);
    const run = sumBuckets(samples, RUN, mine);
    const outcomes = new Map<string, number>();
    let executor = '';
    for (const sample of samples) {
      if (sample.name !== `${RUN}_count` || !mine(sample.labels)) continue;
      const outcome = sample.labels[OUTCOME_LABEL] ?? '?';
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + sample.value);
      executor ||= sample.labels[EXECUTOR_LABEL] ?? '';
    }
    const ran = [...outcomes.values()].reduce((sum, count) => sum + count, 0);
    const asked = queue.counts.at(-1) ?? 0;
    if (ran === 0 && asked === 0) continue;
    if (executor === '') {
      executor =
        samples.find((sample) => sample.name === `${QUEUE}_count` && mine(sample.labels))?.labels[EXECUTOR_LABEL] ?? '';
    }
    rows.push({
      operation,
      executor,
      calls: Math.max(asked, ran),
      leftQueue: Math.max(0, asked - ran),
      queueP50: histogramQuantile(0.5, queue),
      queueP99: histogramQuantile(0.99, queue),
      runP50: histogramQuantile(0.5, run),
      runP99: histogramQuantile(0.99, run),
      outcomes,
    });
  }
  return rows;
}

/** The verify success rate gauge of each server that reported one. */
export function successRates(samples: readonly PromSample[]): number[] {
  return samples.filter((sample) => sample.name === SUCCESS_RATE).map((sample) => sample.value);
}

/** Formats milliseconds for a table cell. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 10_000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  rightAligned: ReadonlySet<number>,
): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (row: readonly string[]): string =>
    row
      .map((cell, i) => (rightAligned.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/** The admission counts of one server process, as its `GET /limits` reported them. */
export type LimitsReading = Readonly<Record<'verify' | 'tool' | 'judge', GateState>>;

/** A server death, as the summary tells it. */
export interface DeathReport {
  readonly name: string;
  readonly pid: number;
  readonly cause: string;
  readonly at: Date;
  /** Seconds into the load (negative: before it started). */
  readonly loadSeconds: number;
  /** The process that replaced it and how long that took, if it was restarted. */
  readonly restartedAs?: { readonly pid: number; readonly afterMs: number } | undefined;
  /** Seconds between its last reading (metrics and limits) and its death; undefined: never read. */
  readonly lastReadSecondsBefore: number | undefined;
}

/** What the summary needs besides the samples. */
export interface SummaryInput {
  readonly servers: number;
  /** The admission counts of every server process that was read (a restarted server has several). */
  readonly limitReadings: readonly LimitsReading[];
  readonly deaths: readonly DeathReport[];
  /** Calls holding or waiting for a slot on the running servers once the load ended. */
  readonly atEnd?: { readonly active: number; readonly queued: number; readonly servers: number } | undefined;
  /** Running servers that did not answer the final reading, each with how old its figures are. */
  readonly stale?: readonly string[] | undefined;
  /** Human description of each operation's limit, per server (e.g. `Semaphore(2)`). */
  readonly limits: Readonly<Partial<Record<Operation, string>>>;
  readonly operations: readonly OperationSummary[];
  readonly successRates: readonly number[];
  readonly load: LoadStats;
  /** Servers whose endpoint could not be read, with the reason. */
  readonly unreadable: readonly string[];
}

/** The printed summary. */
export function formatSummary(input: SummaryInput): string {
  const out: string[] = [];
  const seconds = (input.load.elapsedMs / 1000).toFixed(1);
  out.push(
    `Summary: ${input.servers} server${input.servers === 1 ? '' : 's'}, ${seconds} s of load, ${input.load.sent} requests sent.`,
  );
  if (input.operations.length === 0) {
    out.push(
      "No operation metrics were read: this table is computed from the servers' Prometheus endpoints, and they have none " +
        'when telemetry is off or exported over OTLP (look in your collector instead). The admission and client-side counts follow.',
    );
  } else {
    out.push(
      'Per operation, summed over the fleet (quantiles interpolated within histogram buckets, as histogram_quantile does):',
      '',
    );
    const rows = input.operations.map((row) => [
      row.operation,
      row.executor,
      input.limits[row.operation] ?? '?',
      String(row.calls),
      formatMs(row.queueP50),
      formatMs(row.queueP99),
      formatMs(row.runP50),
      formatMs(row.runP99),
      [
        ...OUTCOMES.filter((outcome) => (row.outcomes.get(outcome) ?? 0) > 0).map(
          (outcome) => `${outcome} ${row.outcomes.get(outcome)}`,
        ),
        ...(row.leftQueue > 0 ? [`left queue ${row.leftQueue}`] : []),
      ].join(', '),
    ]);
    out.push(
      table(
        [
          'operation',
          'executor',
          'limit per server',
          'calls',
          'queue p50',
          'queue p99',
          'run p50',
          'run p99',
          'outcomes',
        ],
        rows,
        new Set([3, 4, 5, 6, 7]),
      ),
    );
  }
  const verdict = queueingVerdict(input);
  if (verdict.length > 0) out.push('', ...verdict);
  const limitsTable = formatLimits(input.limitReadings);
  if (limitsTable !== undefined) out.push('', limitsTable);
  if (input.atEnd !== undefined) {
    out.push(
      `After the load: ${input.atEnd.active} call${input.atEnd.active === 1 ? '' : 's'} holding a slot, ${input.atEnd.queued} waiting, over the ${input.atEnd.servers} running server${input.atEnd.servers === 1 ? '' : 's'} that answered.`,
    );
  }
  for (const line of input.stale ?? []) out.push(`Stale: ${line}.`);
  if (input.successRates.length > 0) {
    const rates = input.successRates.map((rate) => rate.toFixed(3)).join(', ');
    out.push(
      '',
      `gym.verify.success_rate per server process (of the verifications that ran to a result, the share that completed): ${rates}`,
    );
  }
  const client = LOAD_ROUTES.map((route) => {
    const stats = input.load.routes[route];
    const parts = [`2xx ${stats.statuses['2xx']}`, `4xx ${stats.statuses['4xx']}`, `5xx ${stats.statuses['5xx']}`];
    if (stats.failures > 0) parts.push(`no answer ${stats.failures}`);
    return `${route} ${stats.requests} (${parts.join(', ')})`;
  });
  out.push(`Client side: ${client.join('; ')}.`);
  const rollouts = formatRollouts(input.load);
  if (rollouts !== undefined) out.push(rollouts);
  for (const problem of input.unreadable) out.push(`Not read: ${problem}`);
  if (input.deaths.length > 0) {
    out.push('', `Servers that died unexpectedly (${input.deaths.length}):`);
    for (const death of input.deaths) out.push(...describeDeath(death, input.load));
  }
  return out.join('\n');
}

/** Share of the calls that asked a limit and were refused (queue full, or deadline) at or above which the limit is the bottleneck. */
export const REFUSED_SHARE_BOTTLENECK = 0.05;

function percent(fraction: number): string {
  return `${Math.round(fraction * 100)} %`;
}

/**
 * Is a limit the bottleneck? Yes when calls waited longer for it than they ran (queue time),
 * or when it refused a sizeable share of the calls that asked it (full queue, deadline): a
 * refused call has no queue time at all, so queue time alone says nothing about it.
 */
/** The flag that raises each route's limit. */
const LIMIT_FLAG: Record<string, string> = { verify: '--limit', tool: '--tool-limit', judge: '--judge-limit' };

export function queueingVerdict(input: Pick<SummaryInput, 'operations' | 'limitReadings' | 'limits'>): string[] {
  const lines: string[] = [];
  const worst = input.operations
    .filter((row) => Number.isFinite(row.queueP50) && row.runP50 > 0)
    .sort((a, b) => b.queueP50 / b.runP50 - a.queueP50 / a.runP50)[0];
  if (worst !== undefined && worst.queueP50 > worst.runP50) {
    lines.push(
      `Queueing: ${worst.operation} calls waited ${formatMs(worst.queueP50)} (p50) for a slot of ` +
        `${input.limits[worst.operation] ?? 'their limit'} and then ran ${formatMs(worst.runP50)}: ` +
        `the limit, not the work, is where the time goes. Raise it (${LIMIT_FLAG[worst.operation] ?? 'its limit flag'}) or add servers.`,
    );
  }
  for (const route of ['verify', 'tool', 'judge'] as const) {
    const states = input.limitReadings.map((reading) => reading[route]).filter((state) => state !== undefined);
    const sum = (key: 'admitted' | 'rejected' | 'timedOut'): number =>
      states.reduce((total, state) => total + state[key], 0);
    const refused = sum('rejected') + sum('timedOut');
    const asked = sum('admitted') + refused;
    if (asked === 0 || refused / asked < REFUSED_SHARE_BOTTLENECK) continue;
    lines.push(
      `Refusals: ${route} refused ${percent(refused / asked)} of calls (${refused} of ${asked}: ` +
        `${sum('rejected')} with a full queue, ${sum('timedOut')} past the queue deadline): the limit is the bottleneck. ` +
        `Raise it (${LIMIT_FLAG[route]}) or add servers; a longer queue only trades refusals for waiting.`,
    );
  }
  if (lines.length === 0 && input.operations.length > 0) {
    lines.push(
      'Queueing: no operation waited longer for its limit than it ran, and no limit refused ' +
        `${percent(REFUSED_SHARE_BOTTLENECK)} or more of its calls; the limits are not the bottleneck.`,
    );
  }
  return lines;
}

/** The rollout line: what the orchestrator drove and recorded into `gym.rollout.duration_ms`. */
export function formatRollouts(load: LoadStats): string | undefined {
  const { ended, abandoned, totalMs, longestMs } = load.rollouts;
  if (ended + abandoned === 0) return undefined;
  const times = ended > 0 ? `, mean ${formatMs(totalMs / ended)}, longest ${formatMs(longestMs)}` : '';
  const given =
    abandoned > 0 ? `; ${abandoned} abandoned (a step got no answer, or the load ended first), not recorded` : '';
  return (
    `Rollouts (the orchestrator's episodes: a tool call, then a verify; each ended one recorded in ` +
    `gym.rollout.duration_ms while telemetry is on): ${ended} ended${times}${given}.`
  );
}

function describeDeath(death: DeathReport, load: LoadStats): string[] {
  const when = `${death.at.toISOString()} (${death.loadSeconds.toFixed(1)} s into the load)`;
  const restarted =
    death.restartedAs === undefined
      ? 'not restarted'
      : `restarted as pid ${death.restartedAs.pid} ${(death.restartedAs.afterMs / 1000).toFixed(1)} s later`;
  const noAnswer = load.servers[death.name]?.noAnswer ?? 0;
  const metrics =
    death.lastReadSecondsBefore === undefined
      ? 'every figure it recorded (it died before its first reading)'
      : `what it recorded in the ${death.lastReadSecondsBefore.toFixed(1)} s after its last reading (its earlier figures are in the tables above)`;
  return [
    `  ${death.name} (pid ${death.pid}) died ${death.cause} at ${when}; ${restarted}.`,
    `    Lost: the calls it was serving; ${noAnswer} request${noAnswer === 1 ? '' : 's'} to ${death.name} got no answer over the run; ${metrics}.`,
  ];
}

/** Per limit, over every server process read: capacity, bounds, peaks and what admission did. */
export function formatLimits(readings: readonly LimitsReading[]): string | undefined {
  if (readings.length === 0) return undefined;
  const rows: string[][] = [];
  for (const route of ['verify', 'tool', 'judge'] as const) {
    const states = readings.map((reading) => reading[route]).filter((state) => state !== undefined);
    const first = states[0];
    if (first === undefined) continue;
    const sum = (key: 'admitted' | 'rejected' | 'timedOut' | 'cancelled'): number =>
      states.reduce((total, state) => total + state[key], 0);
    const peak = (key: 'peakActive' | 'peakQueued'): number => Math.max(...states.map((state) => state[key]));
    rows.push([
      first.limitName,
      String(first.limit),
      String(first.maxQueued),
      formatMs(first.queueTimeoutMs),
      String(peak('peakActive')),
      String(peak('peakQueued')),
      String(sum('admitted')),
      String(sum('rejected')),
      String(sum('timedOut')),
      String(sum('cancelled')),
    ]);
  }
  if (rows.length === 0) return undefined;
  return [
    `Admission per limit, over every server process (peaks are the highest of any one server; a refusal is a ${OVERLOADED_STATUS} with Retry-After):`,
    '',
    table(
      [
        'limit',
        'slots',
        'max queued',
        'queue deadline',
        'peak active',
        'peak queued',
        'admitted',
        'refused: full',
        'refused: deadline',
        'client left',
      ],
      rows,
      new Set([1, 2, 3, 4, 5, 6, 7, 8, 9]),
    ),
  ].join('\n');
}
