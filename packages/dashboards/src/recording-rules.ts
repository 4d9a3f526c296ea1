// Recording rules: every rate and quantile the dashboard and the alerts read, recorded once per
// target (`job`, `instance` kept; quantiles across servers are taken at query time from the
// bucket rates). Every raw series is read under each naming, so servers scraped directly and
// behind a Collector land in one recorded series. Every windowed series is kept only while its
// own raw series had a sample within FRESH_WINDOW: a dead process drops out within 50 s, a failed
// scrape changes nothing. No rule depends on `up` or `target_info`, so the rules also work under
// a metric filter that drops `target_info` (NeMo Lens).

import { type InstrumentId, OUTCOMES } from '@gym/constants';
import { eitherNaming, type Naming, type PrometheusSeriesNames } from './prometheus-names.js';
import {
  by,
  LABELS,
  LIMIT_LABELS,
  ms,
  POOL_LABELS,
  RATE_WINDOW,
  scaled,
  TARGET_INFO,
  TARGET_LABELS,
} from './series.js';

/** Outcomes that count as failing work (cancelled is the caller going away, not a failure). */
export const FAILING_OUTCOMES = OUTCOMES.filter((outcome) => ['error', 'timeout', 'crashed'].includes(outcome));

/** The fewest calls in one rate window for a share of failing or refused calls: 1 failure in 3 is noise. */
export const MIN_CALLS_PER_WINDOW = 100;

/** How long a series counts after its last sample: two failed 15 s scrapes in a row, less than a 1 m evaluation. */
const FRESH_WINDOW = '50s';

/** Labels from the instrumentation scope: not part of a server's identity. */
const SCOPE_LABELS = ['otel_scope_name', 'otel_scope_version', 'otel_scope_schema_url'];

/** The matchers of one Gym series that is not a histogram bucket. */
const GYM_SERIES = '{__name__=~"gym_.+", le=""}';

/** The recorded series names (`level:metric:operations`), from the un-suffixed name. */
export function recordedNames(names: Naming) {
  const plain = (id: InstrumentId): string => names(id)[0]!.base;
  const w = RATE_WINDOW;
  return {
    targetUp: 'instance:gym_target:up',
    gymSeriesCount: 'instance:gym_series:count',
    gymSeriesInstances: 'job:gym_series:instances',
    gymSeriesInstancesMin: 'job:gym_series:instances_min10m',
    targetInfoInstances: 'job:target_info:instances',
    targetInfoInstancesMin: 'job:target_info:instances_min10m',
    operationQueueBucketRate: `instance:${plain('operationQueueDuration')}_bucket:rate${w}`,
    operationQueueCountRate: `instance:${plain('operationQueueDuration')}_count:rate${w}`,
    operationRunBucketRate: `instance:${plain('operationDuration')}_bucket:rate${w}`,
    operationRunCountRate: `instance:${plain('operationDuration')}_count:rate${w}`,
    operationFailureRatio: `job:${plain('operationDuration')}:failure_ratio_rate${w}`,
    rolloutBucketRate: `instance:${plain('rolloutDuration')}_bucket:rate${w}`,
    verifyBucketRate: `instance:${plain('verifyDuration')}_bucket:rate${w}`,
    verifyCountRate: `instance:${plain('verifyDuration')}_count:rate${w}`,
    verifyCalls: `instance:${plain('verifyDuration')}_count:sum`,
    verifyCompleted: `instance:${plain('verifySuccessRate')}:completed_calls`,
    verifySuccessRatio: `instance:${plain('verifySuccessRate')}:ratio_rate${w}`,
    concurrencySaturation: `instance:${plain('concurrencyActive')}:saturation_ratio`,
    concurrencySaturationAvg: `instance:${plain('concurrencyActive')}:saturation_ratio_avg${w}`,
    concurrencyQueueMax: `instance:${plain('concurrencyQueueDepth')}:max${w}`,
    oldestWait: `instance:${plain('concurrencyOldestWait')}:max`,
    oldestWaitMin: `instance:${plain('concurrencyOldestWait')}:min${w}`,
    oldestWaitDrops: `instance:${plain('concurrencyOldestWait')}:drops${w}`,
    queueDepthDrops: `instance:${plain('concurrencyQueueDepth')}:drops${w}`,
    admissionTimeoutsRate: `instance:${plain('admissionTimeouts')}:rate${w}`,
    admissionCancelledRate: `instance:${plain('admissionCancelled')}:rate${w}`,
    admissionRejectedRate: `instance:${plain('admissionRejected')}:rate${w}`,
    admissionRefusedRate: `instance:gym_concurrency_admission_refused:rate${w}`,
    admissionRefusedRatio: `instance:gym_concurrency_admission_refused:ratio_rate${w}`,
    eventLoopLagBucketRate: `instance:${plain('eventLoopLag')}_bucket:rate${w}`,
    eventLoopLagP99: `instance:${plain('eventLoopLag')}:p99_rate${w}`,
    cpuRate: `instance:${plain('processCpuTime')}:rate${w}`,
    gcTimeRate: `instance:${plain('gcDuration')}_sum:rate${w}`,
    sandboxStartupBucketRate: `instance:${plain('sandboxStartupDuration')}_bucket:rate${w}`,
    sandboxExecBucketRate: `instance:${plain('sandboxExecDuration')}_bucket:rate${w}`,
    sandboxCreateRetryRate: `instance:${plain('sandboxCreateRetry')}:rate${w}`,
    startupStageDuration: `instance:${plain('serverStartupStageDuration')}:mean`,
    poolQueueBucketRate: `instance:${plain('httpPoolQueueDuration')}_bucket:rate${w}`,
    poolQueueCountRate: `instance:${plain('httpPoolQueueDuration')}_count:rate${w}`,
    poolQueueP50: `instance:${plain('httpPoolQueueDuration')}:p50_rate${w}`,
    poolConnectRate: `instance:${plain('httpPoolConnectTotal')}:rate${w}`,
    poolQueuedRatio: `instance:${plain('httpPoolConnectTotal')}:queued_ratio_rate${w}`,
  };
}

type RecordedNames = ReturnType<typeof recordedNames>;

/** The recording rule group; `timeScale` multiplies every range window, the names keep the shipped one. */
export function recordingRules(names: Naming, timeScale = 1) {
  const r = recordedNames(names);
  const window = scaled(RATE_WINDOW, timeScale);
  const fresh = scaled(FRESH_WINDOW, timeScale);
  const tenMinutes = scaled('10m', timeScale);
  const rate = (series: string): string => `rate(${series}[${window}])`;
  // An instant read that ends with its process (the default lookback keeps it 5 minutes).
  const latest = (name: string): string => `last_over_time(${name}[${fresh}])`;
  // `fn(name[window])`, kept only while `name` itself had a sample within the fresh window.
  const over = (fn: string) => (name: string) => `(${fn}(${name}[${window}]) and present_over_time(${name}[${fresh}]))`;
  const enoughCalls = `>= (${MIN_CALLS_PER_WINDOW} / ${ms(window) / 1000})`;
  const sumRate = (labels: readonly string[], id: InstrumentId, part: keyof PrometheusSeriesNames = 'series') =>
    `sum ${by(...labels)} (${eitherNaming(names, id, part, over('rate'))})`;
  const perLimit = (agg: string, id: InstrumentId, wrap: (name: string) => string) =>
    `${agg} ${by(...LIMIT_LABELS)} (${eitherNaming(names, id, 'series', wrap)})`;
  const withoutScope = `without (${SCOPE_LABELS.join(', ')})`;
  const op = [...TARGET_LABELS, LABELS.operation, LABELS.executor];
  const opJob = by('job', LABELS.operation, LABELS.executor);
  const stage = [...TARGET_LABELS, LABELS.serverName, LABELS.startupStage];
  const target = TARGET_LABELS;
  const exprs: Record<keyof RecordedNames, string> = {
    // A target that answers now: its target_info is fresh (a failed scrape marks it stale at
    // once) and its scrape did not fail. Servers behind a Collector have no `up` of their own.
    targetUp: `max ${by(...target)} (${TARGET_INFO}) unless on (job, instance) (up == 0)`,
    // The instances of a job exporting Gym series (buckets left out), and those whose target_info
    // a Collector forwards.
    gymSeriesCount: `count ${by(...target)} (${GYM_SERIES})`,
    gymSeriesInstances: `count ${by('job')} (${r.gymSeriesCount})`,
    gymSeriesInstancesMin: `min_over_time(${r.gymSeriesInstances}[${tenMinutes}])`,
    targetInfoInstances: `count ${by('job')} (max ${by(...target)} (${TARGET_INFO})) and on (job) ${r.gymSeriesInstances}`,
    targetInfoInstancesMin: `min_over_time(${r.targetInfoInstances}[${tenMinutes}])`,
    operationQueueBucketRate: sumRate([...op, 'le'], 'operationQueueDuration', 'bucket'),
    operationQueueCountRate: sumRate(target, 'operationQueueDuration', 'count'),
    operationRunBucketRate: sumRate([...op, 'le'], 'operationDuration', 'bucket'),
    operationRunCountRate: sumRate([...op, LABELS.outcome], 'operationDuration', 'count'),
    operationFailureRatio:
      `sum ${opJob} (${r.operationRunCountRate}{${LABELS.outcome}=~"${FAILING_OUTCOMES.join('|')}"})` +
      ` / (sum ${opJob} (${r.operationRunCountRate}) ${enoughCalls})`,
    rolloutBucketRate: sumRate([...target, 'le'], 'rolloutDuration', 'bucket'),
    verifyBucketRate: sumRate([...target, 'le'], 'verifyDuration', 'bucket'),
    verifyCountRate: sumRate(target, 'verifyDuration', 'count'),
    // completed = round(success_rate × calls) is a counter: its rate over the calls' rate is the
    // window's share. Per series, then summed: two processes under one instance cannot cover for each other.
    verifyCalls: `sum ${withoutScope} (${eitherNaming(names, 'verifyDuration', 'count', latest)})`,
    verifyCompleted: `round(max ${withoutScope} (${eitherNaming(names, 'verifySuccessRate', 'series', latest)}) * ${r.verifyCalls})`,
    // Both written just before, in this evaluation: `and` keeps the ratio only while fresh.
    verifySuccessRatio:
      `sum ${by(...target)} (${rate(r.verifyCompleted)} and ${r.verifyCompleted})` +
      ` / sum ${by(...target)} (${rate(r.verifyCalls)} and ${r.verifyCalls})`,
    concurrencySaturation:
      `sum ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyActive')})` +
      ` / sum ${by(...LIMIT_LABELS)} (${eitherNaming(names, 'concurrencyLimit')})`,
    // Over the window: one scrape between a release and the next hand-off does not look free.
    concurrencySaturationAvg: `${perLimit('sum', 'concurrencyActive', over('avg_over_time'))} / ${perLimit('sum', 'concurrencyLimit', over('avg_over_time'))}`,
    concurrencyQueueMax: perLimit('sum', 'concurrencyQueueDepth', over('max_over_time')),
    // How often the oldest wait or the depth went DOWN in the window (resets() counts decreases):
    // neither going down while the oldest waits is a limit that completes nothing.
    oldestWait: perLimit('max', 'concurrencyOldestWait', latest),
    oldestWaitMin: perLimit('max', 'concurrencyOldestWait', over('min_over_time')),
    oldestWaitDrops: perLimit('sum', 'concurrencyOldestWait', over('resets')),
    queueDepthDrops: perLimit('sum', 'concurrencyQueueDepth', over('resets')),
    admissionTimeoutsRate: sumRate(LIMIT_LABELS, 'admissionTimeouts'),
    admissionCancelledRate: sumRate(LIMIT_LABELS, 'admissionCancelled'),
    admissionRejectedRate: sumRate(LIMIT_LABELS, 'admissionRejected'),
    // Rejected (queue full) or timed out; a limit without a deadline has no timeout series.
    admissionRefusedRate: `(${r.admissionRejectedRate} + on (${LIMIT_LABELS.join(', ')}) ${r.admissionTimeoutsRate}) or ${r.admissionRejectedRate} or ${r.admissionTimeoutsRate}`,
    // Per limit, its refusals as a share of every call on that server that asked a limit
    // (admitted ones record one queue-duration point each, refused ones none).
    admissionRefusedRatio:
      `${r.admissionRefusedRate} / on (job, instance) group_left ()` +
      ` ((sum ${by(...target)} (${r.admissionRefusedRate}) + on (job, instance) ${r.operationQueueCountRate}) ${enoughCalls})`,
    eventLoopLagBucketRate: sumRate([...target, 'le'], 'eventLoopLag', 'bucket'),
    eventLoopLagP99: `histogram_quantile(0.99, ${r.eventLoopLagBucketRate})`,
    cpuRate: sumRate([...target, LABELS.cpuMode], 'processCpuTime'),
    gcTimeRate: sumRate([...target, LABELS.gcType], 'gcDuration', 'sum'),
    sandboxStartupBucketRate: sumRate([...target, LABELS.provider, 'le'], 'sandboxStartupDuration', 'bucket'),
    sandboxExecBucketRate: sumRate([...target, LABELS.provider, 'le'], 'sandboxExecDuration', 'bucket'),
    sandboxCreateRetryRate: sumRate([...target, LABELS.provider], 'sandboxCreateRetry'),
    // One point per stage, recorded at startup: the mean stays readable while the process lives.
    startupStageDuration: `sum ${by(...stage)} (${eitherNaming(names, 'serverStartupStageDuration', 'sum', latest)}) / sum ${by(...stage)} (${eitherNaming(names, 'serverStartupStageDuration', 'count', latest)})`,
    poolQueueBucketRate: sumRate([...POOL_LABELS, 'le'], 'httpPoolQueueDuration', 'bucket'),
    poolQueueCountRate: sumRate(POOL_LABELS, 'httpPoolQueueDuration', 'count'),
    poolQueueP50: `histogram_quantile(0.5, ${r.poolQueueBucketRate})`,
    poolConnectRate: sumRate(POOL_LABELS, 'httpPoolConnectTotal'),
    // 0 for a destination with calls and no wait yet; clamped to 1, as the histogram starts later
    // than the counter and the two rates' extrapolations can cross.
    poolQueuedRatio: `clamp_max(${r.poolQueueCountRate} / on (${POOL_LABELS.join(', ')}) (${r.poolConnectRate} > 0), 1) or (${r.poolConnectRate} * 0)`,
  };
  const rules = Object.entries(exprs).map(([key, expr]) => ({ record: r[key as keyof RecordedNames], expr }));
  return { name: 'gym-telemetry.recording', rules };
}
