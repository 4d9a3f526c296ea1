// Recording rules: every rate and quantile the dashboard and the alerts read is recorded
// once, per target (`job`, `instance` kept), so a panel joins the recorded series to
// `target_info` to filter by server and run. Quantiles across servers are taken at query
// time from the recorded bucket rates: a p99 cannot be averaged, but bucket rates can be summed.
//
// Two rules hold the whole design:
// - every raw series is read under each naming (`eitherNaming`): JS servers scraped directly
//   and Python servers behind a Collector (unit suffixes) land in the same recorded series;
// - every per-target series is joined to `instance:gym_target:up`, the targets that answer
//   now, so a dead, hung or replaced process drops out at once instead of lingering for the
//   5 minutes its rate window still covers.

import { OUTCOMES, type Outcome } from '@gym/constants';
import { eitherNaming, type Naming, RATE_WINDOW, type RecordedNames, recordedNames } from './naming.js';
import { LABELS, type SeriesId, TARGET_INFO } from './series.js';
import type { RecordingRule, RuleGroup } from './types.js';

/** The labels a scrape gives every series of one process. */
export const TARGET_LABELS = ['job', 'instance'] as const;

/** Outcomes that count as failing work (cancelled is the caller going away, not a failure). */
export const FAILING_OUTCOMES: readonly Outcome[] = OUTCOMES.filter(
  (outcome) => outcome === 'error' || outcome === 'timeout' || outcome === 'crashed',
);

/**
 * The fewest calls in one rate window over which a share of failing or refused calls is
 * recorded: below it one call moves the share by a percent or more, and 1 failure of 3 calls is
 * noise, not a 33% failure rate. The ratio series is absent for such a window.
 */
export const MIN_CALLS_PER_WINDOW = 100;

/** `by (...)` label list. */
export function by(...labels: readonly string[]): string {
  return `by (${labels.join(', ')})`;
}

/** The labels of one metered limit. */
export const LIMIT_LABELS = [...TARGET_LABELS, LABELS.component, LABELS.limitName, LABELS.serverName] as const;

/** The labels of one destination of one process's outgoing connection pools. */
export const POOL_LABELS = [...TARGET_LABELS, LABELS.destination] as const;

const DURATION_UNITS_MS = [
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
] as const;

/** The milliseconds of a Prometheus duration in ms, s, m or h. */
function ms(duration: string): number {
  const match = /^(\d+)(ms|s|m|h)$/.exec(duration);
  const unit = DURATION_UNITS_MS.find(([name]) => name === match?.[2]);
  if (match === null || unit === undefined) throw new RangeError(`${duration} is not a duration in ms, s, m or h`);
  return Number(match[1]) * unit[1];
}

/**
 * A Prometheus duration (`5m`, `1h`) times `scale`, in the largest unit that divides it:
 * `scaled('5m', 1)` is `5m`, `scaled('5m', 1 / 15)` is `20s`. Scale 1 is the shipped rules.
 */
export function scaled(duration: string, scale: number): string {
  const total = Math.round(ms(duration) * scale);
  if (!(total >= 1)) throw new RangeError(`${duration} scaled by ${scale} is under a millisecond`);
  const [name, size] = DURATION_UNITS_MS.find(([, size]) => total % size === 0) ?? ['ms', 1];
  return `${total / size}${name}`;
}

/** `expr` kept only for targets that answer now (see {@link recordingRules}). */
export function whileUp(expr: string, r: RecordedNames): string {
  return `(${expr}) and on (job, instance) ${r.targetUp}`;
}

/**
 * The recording rule group for one naming. `timeScale` multiplies every range window (tests
 * only, through `@gym/dashboards/internal`); the recorded names keep the shipped window's name.
 */
export function recordingRules(names: Naming, timeScale = 1): RuleGroup<RecordingRule> {
  const r: RecordedNames = recordedNames(names);
  const window = scaled(RATE_WINDOW, timeScale);
  const rate = (series: string): string => `rate(${series}[${window}])`;
  // A calls-per-second rate that is at least MIN_CALLS_PER_WINDOW calls in one window.
  const enoughCalls = `>= (${MIN_CALLS_PER_WINDOW} / ${ms(window) / 1000})`;
  const any = (id: SeriesId, part: 'series' | 'bucket' | 'sum' | 'count' = 'series') => eitherNaming(names, id, part);
  const rateOf = (id: SeriesId, part: 'series' | 'bucket' | 'sum' | 'count' = 'series') =>
    eitherNaming(names, id, part, rate);
  const up = (expr: string) => whileUp(expr, r);
  const op = [...TARGET_LABELS, LABELS.operation, LABELS.executor];
  const limits = LIMIT_LABELS.join(', ');
  const failing = FAILING_OUTCOMES.join('|');
  const stage = [...TARGET_LABELS, LABELS.serverName, LABELS.startupStage];
  const pool = POOL_LABELS;
  const rules: RecordingRule[] = [
    {
      // A target that answers now: its target_info is fresh (a failed scrape marks it stale at
      // once) and its scrape did not fail. Servers behind a Collector have no `up` of their own;
      // their target_info lasts as long as the Collector exports it.
      record: r.targetUp,
      expr: `max ${by(...TARGET_LABELS)} (${TARGET_INFO}) unless on (job, instance) (up == 0)`,
    },
    {
      record: r.operationQueueBucketRate,
      expr: up(`sum ${by(...op, 'le')} (${rateOf('operationQueueDuration', 'bucket')})`),
    },
    {
      record: r.operationQueueCountRate,
      expr: up(`sum ${by(...TARGET_LABELS)} (${rateOf('operationQueueDuration', 'count')})`),
    },
    {
      record: r.operationRunBucketRate,
      expr: up(`sum ${by(...op, 'le')} (${rateOf('operationDuration', 'bucket')})`),
    },
    {
      record: r.operationRunCountRate,
      expr: up(`sum ${by(...op, LABELS.outcome)} (${rateOf('operationDuration', 'count')})`),
    },
    {
      record: r.operationFailureRatio,
      expr:
        `sum ${by('job', LABELS.operation, LABELS.executor)} (${r.operationRunCountRate}{${LABELS.outcome}=~"${failing}"})` +
        ` / (sum ${by('job', LABELS.operation, LABELS.executor)} (${r.operationRunCountRate}) ${enoughCalls})`,
    },
    {
      record: r.rolloutBucketRate,
      expr: up(`sum ${by(...TARGET_LABELS, 'le')} (${rateOf('rolloutDuration', 'bucket')})`),
    },
    {
      record: r.verifyBucketRate,
      expr: up(`sum ${by(...TARGET_LABELS, 'le')} (${rateOf('verifyDuration', 'bucket')})`),
    },
    { record: r.verifyCountRate, expr: up(`sum ${by(...TARGET_LABELS)} (${rateOf('verifyDuration', 'count')})`) },
    // The windowed verify success ratio from the cumulative gauge and the histogram count:
    // completed = round(success_rate × calls) is a counter (it resets with the process), so its
    // rate over the window divided by the calls' rate is the share of the window's calls that
    // completed. Both counters are recorded at the same instants, so their rates match.
    { record: r.verifyCalls, expr: up(`sum ${by(...TARGET_LABELS)} (${any('verifyDuration', 'count')})`) },
    {
      record: r.verifyCompleted,
      expr: up(
        `round(max ${by(...TARGET_LABELS)} (${any('verifySuccessRate')}) * on (job, instance) ${r.verifyCalls})`,
      ),
    },
    {
      record: r.verifySuccessRatio,
      expr: up(`${rate(r.verifyCompleted)} / on (job, instance) ${rate(r.verifyCalls)}`),
    },
    {
      record: r.concurrencySaturation,
      expr: up(
        `sum ${by(...LIMIT_LABELS)} (${any('concurrencyActive')})` +
          ` / sum ${by(...LIMIT_LABELS)} (${any('concurrencyLimit')})`,
      ),
    },
    {
      // Over the window, from every scrape: one scrape caught between a release and the next
      // hand-off does not make a saturated limit look free.
      record: r.concurrencySaturationAvg,
      expr: up(
        `sum ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyActive', 'series', (name) => `avg_over_time(${name}[${window}])`)})` +
          ` / sum ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyLimit', 'series', (name) => `avg_over_time(${name}[${window}])`)})`,
      ),
    },
    {
      record: r.concurrencyQueueMax,
      expr: up(
        `sum ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyQueueDepth', 'series', (name) => `max_over_time(${name}[${window}])`)})`,
      ),
    },
    { record: r.admissionTimeoutsRate, expr: up(`sum ${by(...LIMIT_LABELS)} (${rateOf('admissionTimeouts')})`) },
    { record: r.admissionCancelledRate, expr: up(`sum ${by(...LIMIT_LABELS)} (${rateOf('admissionCancelled')})`) },
    { record: r.admissionRejectedRate, expr: up(`sum ${by(...LIMIT_LABELS)} (${rateOf('admissionRejected')})`) },
    {
      // Refused in admission: rejected at once (queue full) or timed out waiting. A limit
      // without a deadline has no timeout series, hence the `or`.
      record: r.admissionRefusedRate,
      expr: `(${r.admissionRejectedRate} + on (${limits}) ${r.admissionTimeoutsRate}) or ${r.admissionRejectedRate} or ${r.admissionTimeoutsRate}`,
    },
    {
      // Per limit, its refusals as a share of every call on that server that asked a limit:
      // the admitted ones (one queue-duration point each) and the refused ones (none).
      record: r.admissionRefusedRatio,
      expr:
        `${r.admissionRefusedRate} / on (job, instance) group_left ()` +
        ` ((sum ${by(...TARGET_LABELS)} (${r.admissionRefusedRate}) + on (job, instance) ${r.operationQueueCountRate}) ${enoughCalls})`,
    },
    {
      record: r.eventLoopLagBucketRate,
      expr: up(`sum ${by(...TARGET_LABELS, 'le')} (${rateOf('eventLoopLag', 'bucket')})`),
    },
    { record: r.eventLoopLagP99, expr: `histogram_quantile(0.99, ${r.eventLoopLagBucketRate})` },
    {
      record: r.cpuRate,
      expr: up(`sum ${by(...TARGET_LABELS, LABELS.cpuMode)} (${rateOf('processCpuTime')})`),
    },
    { record: r.gcTimeRate, expr: up(`sum ${by(...TARGET_LABELS, LABELS.gcType)} (${rateOf('gcDuration', 'sum')})`) },
    {
      record: r.sandboxStartupBucketRate,
      expr: up(`sum ${by(...TARGET_LABELS, LABELS.provider, 'le')} (${rateOf('sandboxStartupDuration', 'bucket')})`),
    },
    {
      record: r.sandboxExecBucketRate,
      expr: up(`sum ${by(...TARGET_LABELS, LABELS.provider, 'le')} (${rateOf('sandboxExecDuration', 'bucket')})`),
    },
    {
      record: r.sandboxCreateRetryRate,
      expr: up(`sum ${by(...TARGET_LABELS, LABELS.provider)} (${rateOf('sandboxCreateRetry')})`),
    },
    {
      // One point per stage per process, recorded once at startup: the mean of the process's
      // points is the stage's duration, and it stays readable for as long as the process lives
      // (a rate would empty 5 minutes after startup).
      record: r.startupStageDuration,
      expr: up(
        `sum ${by(...stage)} (${any('serverStartupStageDuration', 'sum')}) / sum ${by(...stage)} (${any('serverStartupStageDuration', 'count')})`,
      ),
    },
    {
      record: r.poolQueueBucketRate,
      expr: up(`sum ${by(...pool, 'le')} (${rateOf('httpPoolQueueDuration', 'bucket')})`),
    },
    { record: r.poolQueueCountRate, expr: up(`sum ${by(...pool)} (${rateOf('httpPoolQueueDuration', 'count')})`) },
    { record: r.poolQueueP50, expr: `histogram_quantile(0.5, ${r.poolQueueBucketRate})` },
    { record: r.poolConnectRate, expr: up(`sum ${by(...pool)} (${rateOf('httpPoolConnectTotal')})`) },
    {
      // The share of the calls to a destination that queued for a connection: a queued call
      // records one wait point, every call counts in connect_total. A destination with calls
      // and no wait point yet (its histogram is not created until a call queues) reads 0. At
      // most 1: a wait point is recorded when the wait ends, after its call was counted, and the
      // histogram starts later than the counter, so the two rates' extrapolations can cross.
      record: r.poolQueuedRatio,
      expr: `clamp_max(${r.poolQueueCountRate} / on (${pool.join(', ')}) (${r.poolConnectRate} > 0), 1) or (${r.poolConnectRate} * 0)`,
    },
  ];
  return { name: 'gym-telemetry.recording', rules };
}
