// Every series the dashboard and the rules read, by its OpenTelemetry name from
// @gym/constants, with the kind and unit that decide its Prometheus name. Nothing else in this
// package spells a series name: a renamed constant renames the panel, the rule and the test.

import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  ATTR_CPU_MODE,
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OUTCOME,
  ATTR_RUN_ID,
  ATTR_SANDBOX_PROVIDER,
  ATTR_SERVER_NAME,
  ATTR_SERVER_TYPE,
  ATTR_V8JS_GC_TYPE,
  METRIC_CONCURRENCY_ACTIVE,
  METRIC_CONCURRENCY_ADMISSION_CANCELLED,
  METRIC_CONCURRENCY_ADMISSION_REJECTED,
  METRIC_CONCURRENCY_ADMISSION_TIMEOUTS,
  METRIC_CONCURRENCY_AVAILABLE,
  METRIC_CONCURRENCY_LIMIT,
  METRIC_CONCURRENCY_QUEUE_DEPTH,
  METRIC_EVENT_LOOP_LAG,
  METRIC_OPERATION_ACTIVE,
  METRIC_OPERATION_DURATION,
  METRIC_OPERATION_QUEUE_DURATION,
  METRIC_OPERATION_QUEUED,
  METRIC_PROCESS_CPU_TIME,
  METRIC_PROCESS_MEMORY_USAGE,
  METRIC_PROCESS_OPEN_FD_COUNT,
  METRIC_PROCESS_THREAD_COUNT,
  METRIC_REQUESTS_IN_FLIGHT,
  METRIC_ROLLOUT_DURATION,
  METRIC_SANDBOX_ACTIVE,
  METRIC_SANDBOX_CREATE_RETRY,
  METRIC_SANDBOX_EXEC_DURATION,
  METRIC_SANDBOX_STARTUP_DURATION,
  METRIC_SERVERS_ACTIVE,
  METRIC_V8JS_GC_DURATION,
  METRIC_VERIFY_DURATION,
  METRIC_VERIFY_SUCCESS_RATE,
  UNIT_REQUEST,
  UNIT_SANDBOX,
  UNIT_SLOT,
  UNIT_WAIT,
  UNIT_WAITER,
} from '@gym/constants';
import { labelName } from './prometheus-names.js';
import type { SeriesDefinition } from './types.js';

/** The series of the dashboard and rules, keyed by a short id. */
export const SERIES = {
  operationQueueDuration: { otelName: METRIC_OPERATION_QUEUE_DURATION, kind: 'histogram', unit: 'ms' },
  operationDuration: { otelName: METRIC_OPERATION_DURATION, kind: 'histogram', unit: 'ms' },
  operationQueued: { otelName: METRIC_OPERATION_QUEUED, kind: 'gauge', unit: '{operation}' },
  operationActive: { otelName: METRIC_OPERATION_ACTIVE, kind: 'gauge', unit: '{operation}' },
  rolloutDuration: { otelName: METRIC_ROLLOUT_DURATION, kind: 'histogram', unit: 'ms' },
  verifyDuration: { otelName: METRIC_VERIFY_DURATION, kind: 'histogram', unit: 'ms' },
  verifySuccessRate: { otelName: METRIC_VERIFY_SUCCESS_RATE, kind: 'gauge', unit: '1' },
  serversActive: { otelName: METRIC_SERVERS_ACTIVE, kind: 'gauge', unit: '' },
  concurrencyLimit: { otelName: METRIC_CONCURRENCY_LIMIT, kind: 'gauge', unit: UNIT_SLOT },
  concurrencyActive: { otelName: METRIC_CONCURRENCY_ACTIVE, kind: 'gauge', unit: UNIT_SLOT },
  concurrencyAvailable: { otelName: METRIC_CONCURRENCY_AVAILABLE, kind: 'gauge', unit: UNIT_SLOT },
  concurrencyQueueDepth: { otelName: METRIC_CONCURRENCY_QUEUE_DEPTH, kind: 'gauge', unit: UNIT_WAITER },
  admissionTimeouts: { otelName: METRIC_CONCURRENCY_ADMISSION_TIMEOUTS, kind: 'counter', unit: UNIT_WAIT },
  admissionCancelled: { otelName: METRIC_CONCURRENCY_ADMISSION_CANCELLED, kind: 'counter', unit: UNIT_WAIT },
  admissionRejected: { otelName: METRIC_CONCURRENCY_ADMISSION_REJECTED, kind: 'counter', unit: UNIT_WAIT },
  eventLoopLag: { otelName: METRIC_EVENT_LOOP_LAG, kind: 'histogram', unit: 'ms' },
  requestsInFlight: { otelName: METRIC_REQUESTS_IN_FLIGHT, kind: 'gauge', unit: UNIT_REQUEST },
  processCpuTime: { otelName: METRIC_PROCESS_CPU_TIME, kind: 'counter', unit: 's' },
  processMemoryUsage: { otelName: METRIC_PROCESS_MEMORY_USAGE, kind: 'gauge', unit: 'By' },
  processThreadCount: { otelName: METRIC_PROCESS_THREAD_COUNT, kind: 'gauge', unit: '{thread}' },
  processOpenFds: { otelName: METRIC_PROCESS_OPEN_FD_COUNT, kind: 'gauge', unit: '{count}' },
  gcDuration: { otelName: METRIC_V8JS_GC_DURATION, kind: 'histogram', unit: 's' },
  sandboxActive: { otelName: METRIC_SANDBOX_ACTIVE, kind: 'gauge', unit: UNIT_SANDBOX },
  sandboxStartupDuration: { otelName: METRIC_SANDBOX_STARTUP_DURATION, kind: 'histogram', unit: 'ms' },
  sandboxExecDuration: { otelName: METRIC_SANDBOX_EXEC_DURATION, kind: 'histogram', unit: 'ms' },
  sandboxCreateRetry: { otelName: METRIC_SANDBOX_CREATE_RETRY, kind: 'counter', unit: '1' },
} as const satisfies Record<string, SeriesDefinition>;

/** A key of {@link SERIES}. */
export type SeriesId = keyof typeof SERIES;

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
} as const;

/** The series OpenTelemetry SDKs write with the process's resource attributes as labels. */
export const TARGET_INFO = 'target_info' as const;
