// Every series the dashboard and the rules read: an id of the instrument table in
// @gym/constants, whose name, kind and unit decide its Prometheus name. Nothing in this package
// states a name, unit or kind: a renamed instrument renames the panel, the rule and the test.

import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  ATTR_CPU_MODE,
  ATTR_EXECUTOR,
  ATTR_HTTP_DESTINATION_SERVER_NAME,
  ATTR_OPERATION,
  ATTR_OUTCOME,
  ATTR_RUN_ID,
  ATTR_SANDBOX_PROVIDER,
  ATTR_SERVER_NAME,
  ATTR_SERVER_TYPE,
  ATTR_STARTUP_STAGE,
  ATTR_V8JS_GC_TYPE,
  INSTRUMENTS,
  type InstrumentId,
  type InstrumentKind,
} from '@gym/constants';
import { labelName } from './prometheus-names.js';
import type { SeriesDefinition, SeriesKind } from './types.js';

/** How the Prometheus exporters type each kind of instrument (which decides the name's suffixes). */
const PROMETHEUS_KIND: Readonly<Record<InstrumentKind, SeriesKind>> = {
  histogram: 'histogram',
  counter: 'counter',
  'observable counter': 'counter',
  'up-down counter': 'gauge',
  gauge: 'gauge',
  'observable up-down counter': 'gauge',
  'observable gauge': 'gauge',
};

/** The instruments the dashboard and the rules read, by their id in the instrument table. */
const READ = [
  'operationQueueDuration',
  'operationDuration',
  'operationQueued',
  'operationActive',
  'rolloutDuration',
  'verifyDuration',
  'verifySuccessRate',
  'serversActive',
  'concurrencyLimit',
  'concurrencyActive',
  'concurrencyAvailable',
  'concurrencyQueueDepth',
  'admissionTimeouts',
  'admissionCancelled',
  'admissionRejected',
  'eventLoopLag',
  'requestsInFlight',
  'processCpuTime',
  'processMemoryUsage',
  'processThreadCount',
  'processOpenFds',
  'gcDuration',
  'serverStartupStageDuration',
  'sandboxActive',
  'sandboxStartupDuration',
  'sandboxExecDuration',
  'sandboxCreateRetry',
  'httpPoolQueueDuration',
  'httpPoolConnectTotal',
] as const satisfies readonly InstrumentId[];

/** The series of the dashboard and rules, keyed by their id in `INSTRUMENTS` (name, kind and unit from there). */
export const SERIES = Object.fromEntries(
  READ.map((id): [SeriesId, SeriesDefinition] => {
    const { name, kind, unit } = INSTRUMENTS[id];
    return [id, { otelName: name, kind: PROMETHEUS_KIND[kind], unit }];
  }),
) as Readonly<Record<SeriesId, SeriesDefinition>>;

/** A key of {@link SERIES}. */
export type SeriesId = (typeof READ)[number];

/** Every unit of {@link SERIES}, each once: what `--name-suffix <unit>=<suffix>` accepts. */
export const SERIES_UNITS: readonly string[] = [
  ...new Set(Object.values(SERIES).map((series: SeriesDefinition) => series.unit)),
].filter((unit) => unit !== '');

/** Label names, from the attribute keys (the scrape adds `job` and `instance`). */
export const LABELS = {
  operation: labelName(ATTR_OPERATION),
  executor: labelName(ATTR_EXECUTOR),
  outcome: labelName(ATTR_OUTCOME),
  component: labelName(ATTR_CONCURRENCY_COMPONENT),
  limitName: labelName(ATTR_CONCURRENCY_LIMIT_NAME),
  serverName: labelName(ATTR_SERVER_NAME),
  serverType: labelName(ATTR_SERVER_TYPE),
  runId: labelName(ATTR_RUN_ID),
  cpuMode: labelName(ATTR_CPU_MODE),
  gcType: labelName(ATTR_V8JS_GC_TYPE),
  provider: labelName(ATTR_SANDBOX_PROVIDER),
  startupStage: labelName(ATTR_STARTUP_STAGE),
  destination: labelName(ATTR_HTTP_DESTINATION_SERVER_NAME),
} as const;

/** The series OpenTelemetry SDKs write with the process's resource attributes as labels. */
export const TARGET_INFO = 'target_info' as const;
