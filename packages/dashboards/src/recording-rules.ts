// Recording rules: every rate and quantile the dashboard and the alerts read is recorded
// once, per target (`job`, `instance` kept), so a panel joins the recorded series to
// `target_info` to filter by server and run. Quantiles across servers are taken at query
// time from the recorded bucket rates: a p99 cannot be averaged, but bucket rates can be summed.
//
// Three rules hold the whole design:
// - every raw series is read under each naming (`eitherNaming`): JS servers scraped directly
//   and Python servers behind a Collector (unit suffixes) land in the same recorded series;
// - every windowed series (a rate, an average, a max) is kept only while ITS OWN raw series had
//   a sample within `FRESH_WINDOW` (50 s), so a dead or replaced process drops out within 50 s
//   instead of lingering for the 5 minutes its rate window still covers, while a failed scrape
//   (which marks every series of the target stale for one scrape) changes nothing;
//   instant reads go through `last_over_time(…[50s])` for the same reason;
// - no rule depends on a liveness judgement (`up`, `target_info`): liveness has alerts of its own,
//   one per topology, and the other alerts keep their wait through a failed scrape. So the rules
//   also work under a metric filter that drops `target_info` (NeMo Lens keeps only `gym_*` and a
//   few other prefixes).

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

/**
 * How long a series counts after its last sample. A failed scrape marks every series of its
 * target stale until the next scrape succeeds: 50 s bridges two failed scrapes in a row at a 15 s
 * scrape interval, and a dead process still leaves every panel and alert within one evaluation
 * of a 1-minute interval. At a scrape interval of 30 s or more a single failed scrape is longer
 * than the window (see the README's "Scrape interval").
 */
export const FRESH_WINDOW = '50s' as const;

/** The labels a Prometheus exporter adds from the instrumentation scope: not part of a server's identity. */
export const SCOPE_LABELS = ['otel_scope_name', 'otel_scope_version', 'otel_scope_schema_url'] as const;

/** A regex of the Gym series names (`gym_` prefix), and the matchers of one Gym series that is not a histogram bucket. */
export const GYM_SERIES = '{__name__=~"gym_.+", le=""}' as const;

/** `windowed(name)` kept only while `name` had a sample within `fresh` (see {@link recordingRules}). */
export function whileFresh(windowed: (name: string) => string, fresh: string): (name: string) => string {
  return (name) => `(${windowed(name)} and present_over_time(${name}[${fresh}]))`;
}

/**
 * The recording rule group for one naming. `timeScale` multiplies every range window (tests
 * only, through `@gym/dashboards/internal`); the recorded names keep the shipped window's name.
 */
export function recordingRules(names: Naming, timeScale = 1): RuleGroup<RecordingRule> {
  const r: RecordedNames = recordedNames(names);
  const window = scaled(RATE_WINDOW, timeScale);
  const fresh = scaled(FRESH_WINDOW, timeScale);
  const tenMinutes = scaled('10m', timeScale);
  const rate = (series: string): string => `rate(${series}[${window}])`;
  const freshRate = whileFresh(rate, fresh);
  // An instant read that bridges a failed scrape and ends with its process (the default
  // lookback, 5 minutes, would keep a dead process's last value that long).
  const latest = (name: string): string => `last_over_time(${name}[${fresh}])`;
  const over = (fn: string) => whileFresh((name) => `${fn}(${name}[${window}])`, fresh);
  // A calls-per-second rate that is at least MIN_CALLS_PER_WINDOW calls in one window.
  const enoughCalls = `>= (${MIN_CALLS_PER_WINDOW} / ${ms(window) / 1000})`;
  const any = (id: SeriesId, part: 'series' | 'bucket' | 'sum' | 'count' = 'series') => eitherNaming(names, id, part);
  const rateOf = (id: SeriesId, part: 'series' | 'bucket' | 'sum' | 'count' = 'series') =>
    eitherNaming(names, id, part, freshRate);
  const withoutScope = `without (${SCOPE_LABELS.join(', ')})`;
  const op = [...TARGET_LABELS, LABELS.operation, LABELS.executor];
  const limits = LIMIT_LABELS.join(', ');
  const failing = FAILING_OUTCOMES.join('|');
  const stage = [...TARGET_LABELS, LABELS.serverName, LABELS.startupStage];
  const pool = POOL_LABELS;
  const rules: RecordingRule[] = [
    {
      // A target that answers now: its target_info is fresh (a failed scrape marks it stale at
      // once) and its scrape did not fail. Servers behind a Collector have no `up` of their own;
      // their target_info lasts as long as the Collector exports it. A panel's count only: no
      // rule is joined to it (alerts read it over a window).
      record: r.targetUp,
      expr: `max ${by(...TARGET_LABELS)} (${TARGET_INFO}) unless on (job, instance) (up == 0)`,
    },
    // What each topology can see of its servers, counted per job (the liveness alerts compare
    // the median of 5 minutes with the most that were there for 10 minutes in a row):
    // - every topology: the instances exporting Gym series (buckets left out: fewer series);
    // - behind a Collector (no `up` of their own): the instances whose target_info it forwards.
    { record: r.gymSeriesCount, expr: `count ${by(...TARGET_LABELS)} (${GYM_SERIES})` },
    { record: r.gymSeriesInstances, expr: `count ${by('job')} (${r.gymSeriesCount})` },
    { record: r.gymSeriesInstancesMin, expr: `min_over_time(${r.gymSeriesInstances}[${tenMinutes}])` },
    {
      record: r.targetInfoInstances,
      expr: `count ${by('job')} (max ${by(...TARGET_LABELS)} (${TARGET_INFO})) and on (job) ${r.gymSeriesInstances}`,
    },
    { record: r.targetInfoInstancesMin, expr: `min_over_time(${r.targetInfoInstances}[${tenMinutes}])` },
    {
      record: r.operationQueueBucketRate,
      expr: `sum ${by(...op, 'le')} (${rateOf('operationQueueDuration', 'bucket')})`,
    },
    {
      record: r.operationQueueCountRate,
      expr: `sum ${by(...TARGET_LABELS)} (${rateOf('operationQueueDuration', 'count')})`,
    },
    {
      record: r.operationRunBucketRate,
      expr: `sum ${by(...op, 'le')} (${rateOf('operationDuration', 'bucket')})`,
    },
    {
      record: r.operationRunCountRate,
      expr: `sum ${by(...op, LABELS.outcome)} (${rateOf('operationDuration', 'count')})`,
    },
    {
      record: r.operationFailureRatio,
      expr:
        `sum ${by('job', LABELS.operation, LABELS.executor)} (${r.operationRunCountRate}{${LABELS.outcome}=~"${failing}"})` +
        ` / (sum ${by('job', LABELS.operation, LABELS.executor)} (${r.operationRunCountRate}) ${enoughCalls})`,
    },
    {
      record: r.rolloutBucketRate,
      expr: `sum ${by(...TARGET_LABELS, 'le')} (${rateOf('rolloutDuration', 'bucket')})`,
    },
    {
      record: r.verifyBucketRate,
      expr: `sum ${by(...TARGET_LABELS, 'le')} (${rateOf('verifyDuration', 'bucket')})`,
    },
    { record: r.verifyCountRate, expr: `sum ${by(...TARGET_LABELS)} (${rateOf('verifyDuration', 'count')})` },
    // The windowed verify success ratio from the cumulative gauge and the histogram count:
    // completed = round(success_rate × calls) is a counter (it resets with the process), so its
    // rate over the window divided by the calls' rate is the share of the window's calls that
    // completed. Both counters are recorded at the same instants, so their rates match.
    // Per series, not per instance: each process's gauge times its OWN count (every label but the
    // scope's kept), rated, then summed. Two processes under one instance label (behind a
    // Collector without service.instance.id) cannot cover for each other: 100% and 0% of equal
    // traffic read 0.5, not the 1.0 of the highest gauge times everyone's calls.
    { record: r.verifyCalls, expr: `sum ${withoutScope} (${eitherNaming(names, 'verifyDuration', 'count', latest)})` },
    {
      record: r.verifyCompleted,
      expr: `round(max ${withoutScope} (${eitherNaming(names, 'verifySuccessRate', 'series', latest)}) * ${r.verifyCalls})`,
    },
    {
      // Both recorded series were written just before, in this evaluation: `and` them keeps the
      // ratio only while its process is fresh.
      record: r.verifySuccessRatio,
      expr:
        `sum ${by(...TARGET_LABELS)} (${rate(r.verifyCompleted)} and ${r.verifyCompleted})` +
        ` / sum ${by(...TARGET_LABELS)} (${rate(r.verifyCalls)} and ${r.verifyCalls})`,
    },
    {
      record: r.concurrencySaturation,
      expr:
        `sum ${by(...LIMIT_LABELS)} (${any('concurrencyActive')})` +
        ` / sum ${by(...LIMIT_LABELS)} (${any('concurrencyLimit')})`,
    },
    {
      // Over the window, from every scrape: one scrape caught between a release and the next
      // hand-off does not make a saturated limit look free.
      record: r.concurrencySaturationAvg,
      expr:
        `sum ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyActive', 'series', over('avg_over_time'))})` +
        ` / sum ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyLimit', 'series', over('avg_over_time'))})`,
    },
    {
      record: r.concurrencyQueueMax,
      expr: `sum ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyQueueDepth', 'series', over('max_over_time'))})`,
    },
    // A queue that stopped moving: the oldest waiter's age over the window, and how often it or
    // the queue's depth went DOWN in the window (resets() counts decreases). A limit that hands a
    // slot to its oldest waiter lowers the oldest age; one that admits any waiter lowers the depth.
    // Neither going down while the oldest waits is a limit that completes nothing.
    {
      record: r.oldestWait,
      expr: `max ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyOldestWait', 'series', latest)})`,
    },
    {
      record: r.oldestWaitMin,
      expr: `max ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyOldestWait', 'series', over('min_over_time'))})`,
    },
    {
      record: r.oldestWaitDrops,
      expr: `sum ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyOldestWait', 'series', over('resets'))})`,
    },
    {
      record: r.queueDepthDrops,
      expr: `sum ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyQueueDepth', 'series', over('resets'))})`,
    },
    { record: r.admissionTimeoutsRate, expr: `sum ${by(...LIMIT_LABELS)} (${rateOf('admissionTimeouts')})` },
    { record: r.admissionCancelledRate, expr: `sum ${by(...LIMIT_LABELS)} (${rateOf('admissionCancelled')})` },
    { record: r.admissionRejectedRate, expr: `sum ${by(...LIMIT_LABELS)} (${rateOf('admissionRejected')})` },
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
      expr: `sum ${by(...TARGET_LABELS, 'le')} (${rateOf('eventLoopLag', 'bucket')})`,
    },
    { record: r.eventLoopLagP99, expr: `histogram_quantile(0.99, ${r.eventLoopLagBucketRate})` },
    {
      record: r.cpuRate,
      expr: `sum ${by(...TARGET_LABELS, LABELS.cpuMode)} (${rateOf('processCpuTime')})`,
    },
    { record: r.gcTimeRate, expr: `sum ${by(...TARGET_LABELS, LABELS.gcType)} (${rateOf('gcDuration', 'sum')})` },
    {
      record: r.sandboxStartupBucketRate,
      expr: `sum ${by(...TARGET_LABELS, LABELS.provider, 'le')} (${rateOf('sandboxStartupDuration', 'bucket')})`,
    },
    {
      record: r.sandboxExecBucketRate,
      expr: `sum ${by(...TARGET_LABELS, LABELS.provider, 'le')} (${rateOf('sandboxExecDuration', 'bucket')})`,
    },
    {
      record: r.sandboxCreateRetryRate,
      expr: `sum ${by(...TARGET_LABELS, LABELS.provider)} (${rateOf('sandboxCreateRetry')})`,
    },
    {
      // One point per stage per process, recorded once at startup: the mean of the process's
      // points is the stage's duration, and it stays readable for as long as the process lives
      // (a rate would empty 5 minutes after startup).
      record: r.startupStageDuration,
      expr: `sum ${by(...stage)} (${eitherNaming(names, 'serverStartupStageDuration', 'sum', latest)}) / sum ${by(...stage)} (${eitherNaming(names, 'serverStartupStageDuration', 'count', latest)})`,
    },
    {
      record: r.poolQueueBucketRate,
      expr: `sum ${by(...pool, 'le')} (${rateOf('httpPoolQueueDuration', 'bucket')})`,
    },
    { record: r.poolQueueCountRate, expr: `sum ${by(...pool)} (${rateOf('httpPoolQueueDuration', 'count')})` },
    { record: r.poolQueueP50, expr: `histogram_quantile(0.5, ${r.poolQueueBucketRate})` },
    { record: r.poolConnectRate, expr: `sum ${by(...pool)} (${rateOf('httpPoolConnectTotal')})` },
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
