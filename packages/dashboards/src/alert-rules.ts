// Alerting rules: the conditions worth waking someone for. Each has a summary, a description
// and a runbook section of the same name in the README; each is unit-tested with
// `promtool test rules`: it fires on the fault, stays quiet on a healthy fleet, resolves after
// recovery, and one odd scrape inside the fault does not restart its wait. Every condition
// reads a window (a rate, an average, a median), never a single scrape. Liveness is judged by
// alerts of its own, one per topology (a server scraped directly, behind a Collector, under a
// metric filter that drops target_info), and is never a precondition of another alert: a failed
// scrape restarts no alert's wait. `GymTelemetryBlind` says when the rules cannot see the fleet.

import { eitherNaming, type Naming, RATE_WINDOW, recordedNames } from './naming.js';
import { by, FAILING_OUTCOMES, LIMIT_LABELS, POOL_LABELS, scaled, TARGET_LABELS } from './recording-rules.js';
import { LABELS, TARGET_INFO } from './series.js';
import type { AlertRule, RuleGroup } from './types.js';

/** Fraction of failing calls (error, timeout, crashed) over 5 minutes above which `GymOperationsFailing` fires. */
export const FAILING_RATIO_THRESHOLD = 0.05;
/** Share of completed verify calls over 5 minutes below which `GymVerifySuccessDropping` fires. */
export const VERIFY_SUCCESS_FLOOR = 0.9;
/** Average share of a limit's slots held over 5 minutes at or above which it counts as saturated. */
export const SATURATION_THRESHOLD = 0.9;
/**
 * Share of a server's limited calls refused by one limit in admission (rejected or timed out)
 * over 5 minutes above which `GymAdmissionRefusing` fires. Of ALL the server's limited calls:
 * limits count no admissions of their own, so the share of one limit's calls is not known.
 */
export const REFUSED_RATIO_THRESHOLD = 0.01;
/** Event-loop lag p99 (ms) above which `GymEventLoopLagHigh` fires; a bucket boundary of the lag histogram. */
export const EVENT_LOOP_LAG_P99_MS = 100;
/**
 * Share of one process's calls to one destination that queued for a pooled connection over 5
 * minutes above which `GymOutgoingCallsWaitForConnections` may fire.
 */
export const POOL_QUEUED_RATIO_THRESHOLD = 0.1;
/**
 * Median wait (ms) of the calls that queued, over 5 minutes, above which those waits count: a
 * bucket boundary of the queue histogram. Shorter waits are a connection handed straight on.
 */
export const POOL_WAIT_P50_MS = 10;
/**
 * Age (ms) of a limit's oldest waiter, over the whole 5-minute window, above which
 * `GymQueueStuck` may fire: with the 5 minutes it then needs without the queue moving, a
 * waiter has waited at least 6 minutes for a slot.
 */
export const STUCK_WAIT_MS = 60_000;
/** How far back the fleet and target alerts remember what was there. */
const MEMORY = '1h';

/** The alert names, in README order. */
export const ALERT_NAMES = [
  'GymConcurrencyLimitSaturated',
  'GymQueueStuck',
  'GymAdmissionRefusing',
  'GymOperationsFailing',
  'GymVerifySuccessDropping',
  'GymTargetDown',
  'GymServerLostBehindCollector',
  'GymServerLostUnderFilter',
  'GymTargetsAbsent',
  'GymTelemetryBlind',
  'GymFleetShrank',
  'GymEventLoopLagHigh',
  'GymOutgoingCallsWaitForConnections',
] as const;

const runbook = (alert: string): string => `See "Runbook: ${alert}" in the @gym/dashboards README.`;
const label = (name: string): string => `{{ $labels.${name} }}`;

/**
 * The alerting rule group for one naming. `timeScale` multiplies every range window, the
 * memory and every `for:` alike (tests only, through `@gym/dashboards/internal`).
 */
export function alertRules(names: Naming, timeScale = 1): RuleGroup<AlertRule> {
  const r = recordedNames(names);
  const window = scaled(RATE_WINDOW, timeScale);
  const memory = scaled(MEMORY, timeScale);
  // The servers a job has now (the median of the window: one failed scrape changes nothing)
  // below the most it had for 10 minutes in a row within the memory (a new server that overlaps
  // the one it replaces for a few minutes does not raise the peak).
  const fewer = (count: string, min10m: string): string =>
    `(quantile_over_time(0.5, ${count}[${window}]) < max_over_time(${min10m}[${memory}]))`;
  const wait = (duration: string): string => scaled(duration, timeScale);
  const limits = LIMIT_LABELS.join(', ');
  const percent = (fraction: number): string => `${Math.round(fraction * 100)}%`;
  const servers = eitherNaming(names, 'serversActive', 'series');
  const serversOver = (fn: string, window: string, extra = ''): string =>
    eitherNaming(names, 'serversActive', 'series', (name) => `${fn}(${extra}${name}[${window}])`);
  const rules: AlertRule[] = [
    {
      alert: 'GymConcurrencyLimitSaturated',
      expr:
        `(${r.concurrencySaturationAvg} >= ${SATURATION_THRESHOLD}) and on (${limits})` +
        ` ((${r.concurrencyQueueMax} > 0) or (${r.admissionRefusedRate} > 0))`,
      for: wait('10m'),
      labels: { severity: 'warning' },
      annotations: {
        summary: `Limit ${label(LABELS.limitName)} (${label(LABELS.component)}) on ${label('instance')} is saturated`,
        description:
          `On average ${percent(SATURATION_THRESHOLD)} or more of the slots of limit ${label(LABELS.limitName)} were held over 5 minutes, ` +
          'with callers waiting or refused, for 10 minutes: work is waiting for the limit, not for itself.',
        runbook: runbook('GymConcurrencyLimitSaturated'),
      },
    },
    {
      alert: 'GymQueueStuck',
      expr:
        `(${r.oldestWaitMin} > ${STUCK_WAIT_MS}) and on (${limits})` +
        ` (${r.oldestWaitDrops} == 0) and on (${limits}) (${r.queueDepthDrops} == 0)`,
      for: wait('5m'),
      labels: { severity: 'critical' },
      annotations: {
        summary: `The queue of limit ${label(LABELS.limitName)} (${label(LABELS.component)}) on ${label('instance')} is stuck`,
        description:
          `Someone has waited for limit ${label(LABELS.limitName)} for more than ${STUCK_WAIT_MS / 60_000} minute over all of the last 5 minutes, ` +
          'and neither its oldest wait nor its queue went down, for 5 minutes: the limit completes nothing (its holders hang).',
        runbook: runbook('GymQueueStuck'),
      },
    },
    {
      alert: 'GymAdmissionRefusing',
      expr: `${r.admissionRefusedRatio} > ${REFUSED_RATIO_THRESHOLD}`,
      for: wait('5m'),
      labels: { severity: 'warning' },
      annotations: {
        summary: `Limit ${label(LABELS.limitName)} on ${label('instance')} refuses calls`,
        description:
          `More than ${percent(REFUSED_RATIO_THRESHOLD)} of the calls on ${label('instance')} were refused by limit ${label(LABELS.limitName)} ` +
          '(queue full, or no slot within the admission deadline) over 5 minutes, for 5 minutes: those calls never ran.',
        runbook: runbook('GymAdmissionRefusing'),
      },
    },
    {
      alert: 'GymOperationsFailing',
      expr: `${r.operationFailureRatio} > ${FAILING_RATIO_THRESHOLD}`,
      for: wait('10m'),
      labels: { severity: 'warning' },
      annotations: {
        summary: `${label(LABELS.operation)} calls of ${label('job')} are failing`,
        description:
          `More than ${percent(FAILING_RATIO_THRESHOLD)} of ${label(LABELS.operation)} calls (${label(LABELS.executor)}) ` +
          `ended as ${FAILING_OUTCOMES.join(', ')} over 5 minutes, for 10 minutes.`,
        runbook: runbook('GymOperationsFailing'),
      },
    },
    {
      alert: 'GymVerifySuccessDropping',
      expr: `${r.verifySuccessRatio} < ${VERIFY_SUCCESS_FLOOR}`,
      for: wait('5m'),
      labels: { severity: 'warning' },
      annotations: {
        summary: `Verify success on ${label('instance')} is dropping`,
        description: `Fewer than ${percent(VERIFY_SUCCESS_FLOOR)} of the verify calls of the last 5 minutes completed, for 5 minutes.`,
        runbook: runbook('GymVerifySuccessDropping'),
      },
    },
    {
      // Scraped directly. Down or hung: most scrapes of the window failed. Only Gym targets
      // (target_info or Gym series within the memory: a filter may drop target_info), only
      // targets still in service discovery (`up` now).
      alert: 'GymTargetDown',
      expr:
        `(avg_over_time(up[${window}]) < 0.5) and on (job, instance) up` +
        ` and on (job, instance) (max ${by(...TARGET_LABELS)} (max_over_time(${TARGET_INFO}[${memory}]))` +
        ` or max_over_time(${r.gymSeriesCount}[${memory}]))`,
      for: wait('1m'),
      labels: { severity: 'critical' },
      annotations: {
        summary: `Gym target ${label('instance')} of ${label('job')} does not answer`,
        description:
          'Most scrapes of the last 5 minutes failed: the process is dead, hung (stopped, or its event loop blocked) or unreachable.',
        runbook: runbook('GymTargetDown'),
      },
    },
    {
      // Behind a Collector, `up` is the Collector's: a server is seen by the target_info the
      // Collector forwards for it (jobs with an `up` of their own are GymTargetDown's).
      alert: 'GymServerLostBehindCollector',
      expr: `${fewer(r.targetInfoInstances, r.targetInfoInstancesMin)} unless on (job) up`,
      for: wait('2m'),
      labels: { severity: 'critical' },
      annotations: {
        summary: `${label('job')} has fewer servers than it had`,
        description:
          'Fewer servers of this job send their telemetry through the Collector (target_info) than were there for 10 minutes in a row within the last hour: ' +
          'a server died or lost its way to the Collector, and was not replaced.',
        runbook: runbook('GymServerLostBehindCollector'),
      },
    },
    {
      // Under a metric filter that drops target_info (NeMo Lens), behind a Collector: a server
      // is seen by its Gym series alone.
      alert: 'GymServerLostUnderFilter',
      expr:
        `${fewer(r.gymSeriesInstances, r.gymSeriesInstancesMin)} unless on (job) up` +
        ` unless on (job) max_over_time(${r.targetInfoInstances}[${memory}])`,
      for: wait('2m'),
      labels: { severity: 'critical' },
      annotations: {
        summary: `${label('job')} has fewer servers exporting Gym series than it had`,
        description:
          'Fewer instances of this job export gym_* series than did for 10 minutes in a row within the last hour (target_info does not arrive, so the Gym series are what counts): ' +
          'a server died or lost its way to the Collector, and was not replaced.',
        runbook: runbook('GymServerLostUnderFilter'),
      },
    },
    {
      // absent(), per job: every target of a job that answered within the memory is gone. One
      // failed scrape of all of them is not absence: it lasts one evaluation, under the `for:`.
      alert: 'GymTargetsAbsent',
      expr: `max ${by('job')} (max_over_time(${r.targetUp}[${memory}])) unless on (job) max ${by('job')} (${r.targetUp})`,
      for: wait('1m'),
      labels: { severity: 'critical' },
      annotations: {
        summary: `No target of ${label('job')} answers`,
        description:
          'Every Gym target of this job answered within the last hour and none answers now: the whole fleet, or the path to it, is down.',
        runbook: runbook('GymTargetsAbsent'),
      },
    },
    {
      // The rules see Gym series they cannot attribute to servers (no target_info for the job:
      // no server, run or service name), or a job that had Gym series within the memory has none
      // over the whole window (its servers are gone, or the pipeline drops or renames them).
      alert: 'GymTelemetryBlind',
      expr:
        `label_replace(max_over_time(${r.gymSeriesInstances}[${window}]) unless on (job) max_over_time(${r.targetInfoInstances}[${window}]), "reason", "gym_* series arrive without target_info", "", "")` +
        ` or label_replace(max_over_time(${r.gymSeriesInstances}[${memory}]) unless on (job) max_over_time(${r.gymSeriesInstances}[${window}]), "reason", "the job's gym_* series stopped arriving", "", "")`,
      for: wait('10m'),
      labels: { severity: 'warning' },
      annotations: {
        summary: `The Gym telemetry of ${label('job')} is blind: ${label('reason')}`,
        description:
          'The rules cannot see the servers of this job: their gym_* series arrive without target_info (a metric filter drops it, so panels cannot name servers or runs), ' +
          'or its gym_* series stopped arriving although they did within the last hour (the servers are gone, or the pipeline drops or renames them).',
        runbook: runbook('GymTelemetryBlind'),
      },
    },
    {
      // The median of the window (one odd scrape changes nothing) below the peak, or the
      // writer gone: a dead orchestrator does not clear the alert, it keeps it.
      alert: 'GymFleetShrank',
      expr:
        `(max ${by('job')} (${serversOver('quantile_over_time', window, '0.5, ')}) < max ${by('job')} (${serversOver('max_over_time', memory)}))` +
        ` or (max ${by('job')} (${serversOver('max_over_time', memory)}) unless on (job) max ${by('job')} (${servers}))`,
      for: wait('2m'),
      labels: { severity: 'critical' },
      annotations: {
        summary: `The fleet of ${label('job')} is smaller than it was`,
        description:
          'The orchestrator reports fewer servers than the most it reported in the last hour, or stopped reporting ' +
          '(it died): a server died and was not replaced, or nobody watches the fleet any more.',
        runbook: runbook('GymFleetShrank'),
      },
    },
    {
      alert: 'GymEventLoopLagHigh',
      expr: `${r.eventLoopLagP99} > ${EVENT_LOOP_LAG_P99_MS}`,
      for: wait('10m'),
      labels: { severity: 'warning' },
      annotations: {
        summary: `The event loop of ${label('instance')} lags`,
        description:
          `The p99 of event-loop lag has been above ${EVENT_LOOP_LAG_P99_MS} ms for 10 minutes: ` +
          'something blocks the loop, and every request on that server waits for it.',
        runbook: runbook('GymEventLoopLagHigh'),
      },
    },
    {
      // Both windowed; a destination that stops queueing has a NaN median and drops out.
      alert: 'GymOutgoingCallsWaitForConnections',
      expr:
        `(${r.poolQueuedRatio} > ${POOL_QUEUED_RATIO_THRESHOLD})` +
        ` and on (${POOL_LABELS.join(', ')}) (${r.poolQueueP50} > ${POOL_WAIT_P50_MS})`,
      for: wait('10m'),
      labels: { severity: 'warning' },
      annotations: {
        summary: `Calls from ${label('instance')} to ${label(LABELS.destination)} wait for connections`,
        description:
          `More than ${percent(POOL_QUEUED_RATIO_THRESHOLD)} of the calls to ${label(LABELS.destination)} found no free pooled connection over 5 minutes, ` +
          `and half of those waited more than ${POOL_WAIT_P50_MS} ms, for 10 minutes: the connection pool, not the destination, is where their time goes.`,
        runbook: runbook('GymOutgoingCallsWaitForConnections'),
      },
    },
  ];
  return { name: 'gym-telemetry.alerts', rules };
}
