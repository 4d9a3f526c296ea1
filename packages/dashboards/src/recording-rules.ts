// Recording rules: every rate and quantile the dashboard and the alerts read is recorded
// once, per target (`job`, `instance` kept), so a panel joins the recorded series to
// `target_info` to filter by server and run. Quantiles across servers are taken at query
// time from the recorded bucket rates: a p99 cannot be averaged, but bucket rates can be summed.

import { OUTCOMES, type Outcome } from '@gym/constants';
import { type Naming, RATE_WINDOW, type RecordedNames, recordedNames } from './naming.js';
import { LABELS } from './series.js';
import type { RecordingRule, RuleGroup } from './types.js';

/** The labels a scrape gives every series of one process. */
export const TARGET_LABELS = ['job', 'instance'] as const;

/** Outcomes that count as failing work (cancelled is the caller going away, not a failure). */
export const FAILING_OUTCOMES: readonly Outcome[] = OUTCOMES.filter(
  (outcome) => outcome === 'error' || outcome === 'timeout' || outcome === 'crashed',
);

/** `by (...)` label list. */
export function by(...labels: readonly string[]): string {
  return `by (${labels.join(', ')})`;
}

/** The labels of one metered limit. */
export const LIMIT_LABELS = [...TARGET_LABELS, LABELS.component, LABELS.limitName, LABELS.serverName] as const;

function rate(series: string): string {
  return `rate(${series}[${RATE_WINDOW}])`;
}

/** The recording rule group for one naming. */
export function recordingRules(names: Naming): RuleGroup<RecordingRule> {
  const r: RecordedNames = recordedNames(names);
  const s = names.series;
  const op = [...TARGET_LABELS, LABELS.operation, LABELS.executor];
  const failing = FAILING_OUTCOMES.join('|');
  const rules: RecordingRule[] = [
    {
      record: r.operationQueueBucketRate,
      expr: `sum ${by(...op, 'le')} (${rate(s('operationQueueDuration').bucket)})`,
    },
    { record: r.operationRunBucketRate, expr: `sum ${by(...op, 'le')} (${rate(s('operationDuration').bucket)})` },
    {
      record: r.operationRunCountRate,
      expr: `sum ${by(...op, LABELS.outcome)} (${rate(s('operationDuration').count)})`,
    },
    {
      record: r.operationFailureRatio,
      expr:
        `sum ${by('job', LABELS.operation, LABELS.executor)} (${r.operationRunCountRate}{${LABELS.outcome}=~"${failing}"})` +
        ` / sum ${by('job', LABELS.operation, LABELS.executor)} (${r.operationRunCountRate})`,
    },
    { record: r.rolloutBucketRate, expr: `sum ${by(...TARGET_LABELS, 'le')} (${rate(s('rolloutDuration').bucket)})` },
    { record: r.verifyBucketRate, expr: `sum ${by(...TARGET_LABELS, 'le')} (${rate(s('verifyDuration').bucket)})` },
    { record: r.verifyCountRate, expr: `sum ${by(...TARGET_LABELS)} (${rate(s('verifyDuration').count)})` },
    {
      record: r.concurrencySaturation,
      expr:
        `sum ${by(...LIMIT_LABELS)} (${s('concurrencyActive').series})` +
        ` / sum ${by(...LIMIT_LABELS)} (${s('concurrencyLimit').series})`,
    },
    { record: r.admissionTimeoutsRate, expr: `sum ${by(...LIMIT_LABELS)} (${rate(s('admissionTimeouts').series)})` },
    { record: r.admissionCancelledRate, expr: `sum ${by(...LIMIT_LABELS)} (${rate(s('admissionCancelled').series)})` },
    { record: r.admissionRejectedRate, expr: `sum ${by(...LIMIT_LABELS)} (${rate(s('admissionRejected').series)})` },
    { record: r.eventLoopLagBucketRate, expr: `sum ${by(...TARGET_LABELS, 'le')} (${rate(s('eventLoopLag').bucket)})` },
    { record: r.eventLoopLagP99, expr: `histogram_quantile(0.99, ${r.eventLoopLagBucketRate})` },
    { record: r.cpuRate, expr: `sum ${by(...TARGET_LABELS, LABELS.cpuMode)} (${rate(s('processCpuTime').series)})` },
    { record: r.gcTimeRate, expr: `sum ${by(...TARGET_LABELS, LABELS.gcType)} (${rate(s('gcDuration').sum)})` },
    {
      record: r.sandboxStartupBucketRate,
      expr: `sum ${by(...TARGET_LABELS, LABELS.provider, 'le')} (${rate(s('sandboxStartupDuration').bucket)})`,
    },
    {
      record: r.sandboxExecBucketRate,
      expr: `sum ${by(...TARGET_LABELS, LABELS.provider, 'le')} (${rate(s('sandboxExecDuration').bucket)})`,
    },
    {
      record: r.sandboxCreateRetryRate,
      expr: `sum ${by(...TARGET_LABELS, LABELS.provider)} (${rate(s('sandboxCreateRetry').series)})`,
    },
  ];
  return { name: 'gym-telemetry.recording', rules };
}
