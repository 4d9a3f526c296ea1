// Every series the dashboard and the rules can read: the instrument table of @gym/constants,
// whose name, kind and unit decide each Prometheus name. Nothing in this package states a name,
// unit or kind: a renamed instrument renames the panel, the rule and the test.

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
  INSTRUMENTS,
  type InstrumentId,
} from '@gym/constants';
import { sanitizeName } from './prometheus-names.js';

/** A key of `INSTRUMENTS`: a series the dashboard and the rules can read. */
export type SeriesId = InstrumentId;

/** Every unit of `INSTRUMENTS`, each once: what `--name-suffix <unit>=<suffix>` accepts. */
export const SERIES_UNITS: readonly string[] = [...new Set(Object.values(INSTRUMENTS).map(({ unit }) => unit))].filter(
  (unit) => unit !== '',
);

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
} as const;

/** The series OpenTelemetry SDKs write with the process's resource attributes as labels. */
export const TARGET_INFO = 'target_info' as const;

/**
 * The metric-name prefixes NeMo Lens' Prometheus keeps (its `metric_relabel_configs` keep rule):
 * `target_info`, `process_*`, `v8js_*` and `nodejs_*` never arrive behind it.
 */
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
] as const;

/** Whether a Prometheus series name passes NeMo Lens' metric filter. */
export function keptByLens(name: string): boolean {
  return LENS_KEPT_PREFIXES.some((prefix) => name.startsWith(prefix));
}
