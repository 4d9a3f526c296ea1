// The labels, series and durations the dashboard and the rules share.

import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  ATTR_CPU_MODE,
  ATTR_EXECUTOR,
  ATTR_HTTP_DESTINATION_SERVER_NAME,
  ATTR_OPERATION,
  ATTR_OPERATION_OUTCOME,
  ATTR_RUN_ID,
  ATTR_SANDBOX_PROVIDER,
  ATTR_SERVER_NAME,
  ATTR_STARTUP_STAGE,
  ATTR_V8JS_GC_TYPE,
} from '@gym/constants';
import { sanitizeName } from './prometheus-names.js';

/** Label names, from the attribute keys (the scrape adds `job` and `instance`). */
export const LABELS = {
  operation: sanitizeName(ATTR_OPERATION),
  executor: sanitizeName(ATTR_EXECUTOR),
  outcome: sanitizeName(ATTR_OPERATION_OUTCOME),
  component: sanitizeName(ATTR_CONCURRENCY_COMPONENT),
  limitName: sanitizeName(ATTR_CONCURRENCY_LIMIT_NAME),
  serverName: sanitizeName(ATTR_SERVER_NAME),
  runId: sanitizeName(ATTR_RUN_ID),
  cpuMode: sanitizeName(ATTR_CPU_MODE),
  gcType: sanitizeName(ATTR_V8JS_GC_TYPE),
  provider: sanitizeName(ATTR_SANDBOX_PROVIDER),
  startupStage: sanitizeName(ATTR_STARTUP_STAGE),
  destination: sanitizeName(ATTR_HTTP_DESTINATION_SERVER_NAME),
};

/** The labels a scrape gives every series of one process. */
export const TARGET_LABELS = ['job', 'instance'];
/** The labels of one metered limit. */
export const LIMIT_LABELS = [...TARGET_LABELS, LABELS.component, LABELS.limitName, LABELS.serverName];
/** The labels of one destination of one process's outgoing connection pools. */
export const POOL_LABELS = [...TARGET_LABELS, LABELS.destination];

/** The series OpenTelemetry SDKs write with the process's resource attributes as labels. */
export const TARGET_INFO = 'target_info';

/** The rate window of every recording rule. */
export const RATE_WINDOW = '5m';

/** The metric-name prefixes NeMo Lens' Prometheus keeps (its `metric_relabel_configs` keep rule). */
export const LENS_KEPT_PREFIXES = [
  'dl_',
  'megatron_',
  'gen_ai_',
  'rl_',
  'gym_',
  'system_',
  'DCGM_',
  'node_',
  'otelcol_',
];

/** Whether a Prometheus series name passes NeMo Lens' metric filter. */
export function keptByLens(name: string): boolean {
  return LENS_KEPT_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** `by (...)` label list. */
export function by(...labels: readonly string[]): string {
  return `by (${labels.join(', ')})`;
}

const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** The milliseconds of a Prometheus duration in ms, s, m or h. */
export function ms(duration: string): number {
  const [, count, unit] = /^(\d+)(ms|s|m|h)$/.exec(duration) ?? [];
  if (unit === undefined) throw new RangeError(`${duration} is not a duration in ms, s, m or h`);
  return Number(count) * UNIT_MS[unit as keyof typeof UNIT_MS];
}

/** A Prometheus duration times `scale`, in the largest unit that divides it (`scaled('5m', 1 / 15)` is `20s`). */
export function scaled(duration: string, scale: number): string {
  const total = Math.round(ms(duration) * scale);
  if (!(total >= 1)) throw new RangeError(`${duration} scaled by ${scale} is under a millisecond`);
  const [unit, size] = Object.entries(UNIT_MS).find(([, size]) => total % size === 0)!;
  return `${total / size}${unit}`;
}
