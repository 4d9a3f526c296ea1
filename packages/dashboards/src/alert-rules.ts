// Alerting rules: the five conditions worth waking someone for. Each has a summary, a
// description and a runbook section of the same name in the README; each is unit-tested with
// `promtool test rules` (series that fire and series that do not).

import { type Naming, recordedNames } from './naming.js';
import { by, FAILING_OUTCOMES, LIMIT_LABELS, TARGET_LABELS } from './recording-rules.js';
import { LABELS } from './series.js';
import type { AlertRule, RuleGroup } from './types.js';

/** Fraction of failing calls (error, timeout, crashed) over 5 minutes above which `GymOperationsFailing` fires. */
export const FAILING_RATIO_THRESHOLD = 0.05;
/** Verify success rate below which `GymVerifySuccessDropping` fires. */
export const VERIFY_SUCCESS_FLOOR = 0.9;
/** A fall of the verify success rate within 30 minutes at or beyond which `GymVerifySuccessDropping` fires. */
export const VERIFY_SUCCESS_FALL = 0.05;
/** Event-loop lag p99 (ms) above which `GymEventLoopLagHigh` fires; a bucket boundary of the lag histogram. */
export const EVENT_LOOP_LAG_P99_MS = 100;

/** The alert names, in README order. */
export const ALERT_NAMES = [
  'GymConcurrencyLimitSaturated',
  'GymOperationsFailing',
  'GymVerifySuccessDropping',
  'GymFleetShrank',
  'GymEventLoopLagHigh',
] as const;

const runbook = (alert: string): string => `See "Runbook: ${alert}" in the @gym/dashboards README.`;
const label = (name: string): string => `{{ $labels.${name} }}`;

/** The alerting rule group for one naming. */
export function alertRules(names: Naming): RuleGroup<AlertRule> {
  const r = recordedNames(names);
  const s = names.series;
  const limits = LIMIT_LABELS.join(', ');
  const percent = (fraction: number): string => `${Math.round(fraction * 100)}%`;
  const rules: AlertRule[] = [
    {
      alert: 'GymConcurrencyLimitSaturated',
      expr:
        `(${r.concurrencySaturation} >= 1) and on (${limits})` +
        ` (sum ${by(...LIMIT_LABELS)} (${s('concurrencyQueueDepth').series}) > 0)`,
      for: '10m',
      labels: { severity: 'warning' },
      annotations: {
        summary: `Limit ${label(LABELS.limitName)} (${label(LABELS.component)}) on ${label('instance')} is saturated`,
        description:
          `Every slot of limit ${label(LABELS.limitName)} has been held and callers have been waiting for 10 minutes: ` +
          'work is waiting for the limit, not for itself, so queue time grows while run time does not.',
        runbook: runbook('GymConcurrencyLimitSaturated'),
      },
    },
    {
      alert: 'GymOperationsFailing',
      expr: `${r.operationFailureRatio} > ${FAILING_RATIO_THRESHOLD}`,
      for: '10m',
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
      expr:
        `min ${by(...TARGET_LABELS)} (${s('verifySuccessRate').series}) < ${VERIFY_SUCCESS_FLOOR}` +
        ` or min ${by(...TARGET_LABELS)} (delta(${s('verifySuccessRate').series}[30m])) <= -${VERIFY_SUCCESS_FALL}`,
      for: '5m',
      labels: { severity: 'warning' },
      annotations: {
        summary: `Verify success on ${label('instance')} is dropping`,
        description:
          `The share of verify calls that completed (cumulative since the server started) is below ${percent(VERIFY_SUCCESS_FLOOR)} ` +
          `or fell by ${Math.round(VERIFY_SUCCESS_FALL * 100)} points or more within 30 minutes.`,
        runbook: runbook('GymVerifySuccessDropping'),
      },
    },
    {
      alert: 'GymFleetShrank',
      expr:
        `max ${by(...TARGET_LABELS)} (${s('serversActive').series})` +
        ` < max ${by(...TARGET_LABELS)} (max_over_time(${s('serversActive').series}[1h]))`,
      for: '2m',
      labels: { severity: 'critical' },
      annotations: {
        summary: `The fleet of ${label('job')} is smaller than it started`,
        description:
          `The orchestrator at ${label('instance')} reports {{ $value }} servers, fewer than the largest count it ` +
          'reported in the last hour: a server died and was not replaced.',
        runbook: runbook('GymFleetShrank'),
      },
    },
    {
      alert: 'GymEventLoopLagHigh',
      expr: `${r.eventLoopLagP99} > ${EVENT_LOOP_LAG_P99_MS}`,
      for: '10m',
      labels: { severity: 'warning' },
      annotations: {
        summary: `The event loop of ${label('instance')} lags`,
        description:
          `The p99 of event-loop lag has been above ${EVENT_LOOP_LAG_P99_MS} ms for 10 minutes: ` +
          'something blocks the loop, and every request on that server waits for it.',
        runbook: runbook('GymEventLoopLagHigh'),
      },
    },
  ];
  return { name: 'gym-telemetry.alerts', rules };
}
