// Alerting rules, each with a runbook section of its name in the README and a `promtool test
// rules` file. Every condition reads a window, never a single scrape; liveness has alerts of its
// own, one per topology, and is no precondition of another alert.

import { eitherNaming, type Naming } from './prometheus-names.js';
import { FAILING_OUTCOMES, recordedNames } from './recording-rules.js';
import { by, LABELS, LIMIT_LABELS, POOL_LABELS, RATE_WINDOW, scaled, TARGET_INFO, TARGET_LABELS } from './series.js';

/** Share of failing calls (error, timeout, crashed) over 5 minutes above which `GymOperationsFailing` fires. */
const FAILING_RATIO_THRESHOLD = 0.05;
/** Share of completed verify calls over 5 minutes below which `GymVerifySuccessDropping` fires. */
const VERIFY_SUCCESS_FLOOR = 0.9;
/** Average share of a limit's slots held over 5 minutes at or above which it counts as saturated. */
const SATURATION_THRESHOLD = 0.9;
/** Share of ALL a server's limited calls refused by one limit (limits count no admissions of their own). */
const REFUSED_RATIO_THRESHOLD = 0.01;
/** Event-loop lag p99 (ms) above which `GymEventLoopLagHigh` fires; a bucket boundary of the lag histogram. */
const EVENT_LOOP_LAG_P99_MS = 100;
/** Share of one process's calls to one destination that queued for a pooled connection over 5 minutes. */
const POOL_QUEUED_RATIO_THRESHOLD = 0.1;
/** Median wait (ms) of the calls that queued above which those waits count: a bucket boundary of the queue histogram. */
const POOL_WAIT_P50_MS = 10;
/** Age (ms) of a limit's oldest waiter, over the whole 5-minute window, above which `GymQueueStuck` may fire. */
const STUCK_WAIT_MS = 60_000;
/** How far back the fleet and target alerts remember what was there. */
const MEMORY = '1h';

const label = (name: string): string => `{{ $labels.${name} }}`;
const percent = (fraction: number): string => `${Math.round(fraction * 100)}%`;

type Alert = Readonly<Record<'expr' | 'summary' | 'description', string>>;

/** The alerting rule group; `timeScale` multiplies every range window, the memory and every `for:` alike. */
export function alertRules(names: Naming, timeScale = 1) {
  const r = recordedNames(names);
  const window = scaled(RATE_WINDOW, timeScale);
  const memory = scaled(MEMORY, timeScale);
  const alert = (name: string, severity: 'warning' | 'critical', wait: string, { expr, ...text }: Alert) => {
    const runbook = `See "Runbook: ${name}" in the @gym/dashboards README.`;
    return { alert: name, expr, for: scaled(wait, timeScale), labels: { severity }, annotations: { ...text, runbook } };
  };
  // The servers a job has now (the median of the window) below the most it had for 10 minutes in
  // a row within the memory (a replacement that overlaps for a few minutes does not raise the peak).
  const fewer = (count: string, min10m: string): string =>
    `(quantile_over_time(0.5, ${count}[${window}]) < max_over_time(${min10m}[${memory}]))`;
  const limits = LIMIT_LABELS.join(', ');
  const servers = eitherNaming(names, 'serversActive');
  const serversOver = (fn: string, window: string, extra = ''): string =>
    eitherNaming(names, 'serversActive', 'series', (name) => `${fn}(${extra}${name}[${window}])`);
  return {
    name: 'gym-telemetry.alerts',
    rules: [
      alert('GymConcurrencyLimitSaturated', 'warning', '10m', {
        expr:
          `(${r.concurrencySaturationAvg} >= ${SATURATION_THRESHOLD}) and on (${limits})` +
          ` ((${r.concurrencyQueueMax} > 0) or (${r.admissionRefusedRate} > 0))`,
        summary: `Limit ${label(LABELS.limitName)} (${label(LABELS.component)}) on ${label('instance')} is saturated`,
        description:
          `On average ${percent(SATURATION_THRESHOLD)} or more of the slots of limit ${label(LABELS.limitName)} were held over 5 minutes, ` +
          'with callers waiting or refused, for 10 minutes: work is waiting for the limit, not for itself.',
      }),
      alert('GymQueueStuck', 'critical', '5m', {
        expr:
          `(${r.oldestWaitMin} > ${STUCK_WAIT_MS}) and on (${limits})` +
          ` (${r.oldestWaitDrops} == 0) and on (${limits}) (${r.queueDepthDrops} == 0)`,
        summary: `The queue of limit ${label(LABELS.limitName)} (${label(LABELS.component)}) on ${label('instance')} is stuck`,
        description:
          `Someone has waited for limit ${label(LABELS.limitName)} for more than ${STUCK_WAIT_MS / 60_000} minute over all of the last 5 minutes, ` +
          'and neither its oldest wait nor its queue went down, for 5 minutes: the limit completes nothing (its holders hang).',
      }),
      alert('GymAdmissionRefusing', 'warning', '5m', {
        expr: `${r.admissionRefusedRatio} > ${REFUSED_RATIO_THRESHOLD}`,
        summary: `Limit ${label(LABELS.limitName)} on ${label('instance')} refuses calls`,
        description:
          `More than ${percent(REFUSED_RATIO_THRESHOLD)} of the calls on ${label('instance')} were refused by limit ${label(LABELS.limitName)} ` +
          '(queue full, or no slot within the admission deadline) over 5 minutes, for 5 minutes: those calls never ran.',
      }),
      alert('GymOperationsFailing', 'warning', '10m', {
        expr: `${r.operationFailureRatio} > ${FAILING_RATIO_THRESHOLD}`,
        summary: `${label(LABELS.operation)} calls of ${label('job')} are failing`,
        description:
          `More than ${percent(FAILING_RATIO_THRESHOLD)} of ${label(LABELS.operation)} calls (${label(LABELS.executor)}) ` +
          `ended as ${FAILING_OUTCOMES.join(', ')} over 5 minutes, for 10 minutes.`,
      }),
      alert('GymVerifySuccessDropping', 'warning', '5m', {
        expr: `${r.verifySuccessRatio} < ${VERIFY_SUCCESS_FLOOR}`,
        summary: `Verify success on ${label('instance')} is dropping`,
        description: `Fewer than ${percent(VERIFY_SUCCESS_FLOOR)} of the verify calls of the last 5 minutes completed, for 5 minutes.`,
      }),
      // Scraped directly: most scrapes of the window failed, of a Gym target (target_info or Gym
      // series within the memory) still in service discovery (`up` now).
      alert('GymTargetDown', 'critical', '1m', {
        expr:
          `(avg_over_time(up[${window}]) < 0.5) and on (job, instance) up` +
          ` and on (job, instance) (max ${by(...TARGET_LABELS)} (max_over_time(${TARGET_INFO}[${memory}]))` +
          ` or max_over_time(${r.gymSeriesCount}[${memory}]))`,
        summary: `Gym target ${label('instance')} of ${label('job')} does not answer`,
        description:
          'Most scrapes of the last 5 minutes failed: the process is dead, hung (stopped, or its event loop blocked) or unreachable.',
      }),
      // Behind a Collector, `up` is the Collector's: a server is seen by the target_info it forwards.
      alert('GymServerLostBehindCollector', 'critical', '2m', {
        expr: `${fewer(r.targetInfoInstances, r.targetInfoInstancesMin)} unless on (job) up`,
        summary: `${label('job')} has fewer servers than it had`,
        description:
          'Fewer servers of this job send their telemetry through the Collector (target_info) than were there for 10 minutes in a row within the last hour: ' +
          'a server died or lost its way to the Collector, and was not replaced.',
      }),
      // Behind a Collector under a filter that drops target_info: a server is seen by its Gym series.
      alert('GymServerLostUnderFilter', 'critical', '2m', {
        expr:
          `${fewer(r.gymSeriesInstances, r.gymSeriesInstancesMin)} unless on (job) up` +
          ` unless on (job) max_over_time(${r.targetInfoInstances}[${memory}])`,
        summary: `${label('job')} has fewer servers exporting Gym series than it had`,
        description:
          'Fewer instances of this job export gym_* series than did for 10 minutes in a row within the last hour (target_info does not arrive, so the Gym series are what counts): ' +
          'a server died or lost its way to the Collector, and was not replaced.',
      }),
      // absent(), per job; one failed scrape of every target lasts one evaluation, under the `for:`.
      alert('GymTargetsAbsent', 'critical', '1m', {
        expr: `max ${by('job')} (max_over_time(${r.targetUp}[${memory}])) unless on (job) max ${by('job')} (${r.targetUp})`,
        summary: `No target of ${label('job')} answers`,
        description:
          'Every Gym target of this job answered within the last hour and none answers now: the whole fleet, or the path to it, is down.',
      }),
      // Gym series without target_info for the job (no server, run or service name), or a job that
      // had Gym series within the memory has none over the whole window.
      alert('GymTelemetryBlind', 'warning', '10m', {
        expr:
          `label_replace(max_over_time(${r.gymSeriesInstances}[${window}]) unless on (job) max_over_time(${r.targetInfoInstances}[${window}]), "reason", "gym_* series arrive without target_info", "", "")` +
          ` or label_replace(max_over_time(${r.gymSeriesInstances}[${memory}]) unless on (job) max_over_time(${r.gymSeriesInstances}[${window}]), "reason", "the job's gym_* series stopped arriving", "", "")`,
        summary: `The Gym telemetry of ${label('job')} is blind: ${label('reason')}`,
        description:
          'The rules cannot see the servers of this job: their gym_* series arrive without target_info (a metric filter drops it, so panels cannot name servers or runs), ' +
          'or its gym_* series stopped arriving although they did within the last hour (the servers are gone, or the pipeline drops or renames them).',
      }),
      // The median of the window below the peak, or the writer gone (a dead orchestrator keeps it).
      alert('GymFleetShrank', 'critical', '2m', {
        expr:
          `(max ${by('job')} (${serversOver('quantile_over_time', window, '0.5, ')}) < max ${by('job')} (${serversOver('max_over_time', memory)}))` +
          ` or (max ${by('job')} (${serversOver('max_over_time', memory)}) unless on (job) max ${by('job')} (${servers}))`,
        summary: `The fleet of ${label('job')} is smaller than it was`,
        description:
          'The orchestrator reports fewer servers than the most it reported in the last hour, or stopped reporting ' +
          '(it died): a server died and was not replaced, or nobody watches the fleet any more.',
      }),
      alert('GymEventLoopLagHigh', 'warning', '10m', {
        expr: `${r.eventLoopLagP99} > ${EVENT_LOOP_LAG_P99_MS}`,
        summary: `The event loop of ${label('instance')} lags`,
        description:
          `The p99 of event-loop lag has been above ${EVENT_LOOP_LAG_P99_MS} ms for 10 minutes: ` +
          'something blocks the loop, and every request on that server waits for it.',
      }),
      // Both windowed; a destination that stops queueing has a NaN median and drops out.
      alert('GymOutgoingCallsWaitForConnections', 'warning', '10m', {
        expr:
          `(${r.poolQueuedRatio} > ${POOL_QUEUED_RATIO_THRESHOLD})` +
          ` and on (${POOL_LABELS.join(', ')}) (${r.poolQueueP50} > ${POOL_WAIT_P50_MS})`,
        summary: `Calls from ${label('instance')} to ${label(LABELS.destination)} wait for connections`,
        description:
          `More than ${percent(POOL_QUEUED_RATIO_THRESHOLD)} of the calls to ${label(LABELS.destination)} found no free pooled connection over 5 minutes, ` +
          `and half of those waited more than ${POOL_WAIT_P50_MS} ms, for 10 minutes: the connection pool, not the destination, is where their time goes.`,
      }),
    ],
  };
}
