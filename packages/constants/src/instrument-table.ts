// Every instrument the packages create, with every fact of it: name, kind, unit, description,
// value type, metric attribute keys and buckets. The packages create their instruments from
// these entries (through @gym/core's `createInstrument`), `docs/telemetry.md` states them and
// `test/telemetry-doc.test.ts` holds the two together, so a fact changes here and nowhere else.
// `gym.server.request_duration_ms` is not here: it is declared and never created.

import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  ATTR_CPU_MODE,
  ATTR_EXECUTOR,
  ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT,
  ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME,
  ATTR_HTTP_DESTINATION_SERVER_NAME,
  ATTR_OPERATION,
  ATTR_OPERATION_OUTCOME,
  ATTR_SANDBOX_PROVIDER,
  ATTR_SERVER_NAME,
  ATTR_STARTUP_STAGE,
  ATTR_V8JS_GC_TYPE,
} from './attributes.js';
import { COMPONENTS, EXECUTORS, OPERATIONS, OUTCOMES, V8JS_GC_TYPES } from './bounded-sets.js';

/** The kinds of OpenTelemetry instrument, in the words `docs/telemetry.md` uses. */
export type InstrumentKind =
  | 'histogram'
  | 'counter'
  | 'up-down counter'
  | 'gauge'
  | 'observable counter'
  | 'observable up-down counter'
  | 'observable gauge';

/** The pool's total cap, its per-destination cap, or not known. */
const HTTP_POOL_QUEUE_CONSTRAINTS = ['total', 'per_host', 'unknown'] as const;
/** The wait got a connection, or it was given up first. */
const HTTP_POOL_QUEUE_OUTCOMES = ['ok', 'abandoned'] as const;
export type HttpPoolQueueOutcome = (typeof HTTP_POOL_QUEUE_OUTCOMES)[number];

interface InstrumentFacts {
  readonly name: string;
  /** `''` means none at all (the SDK's own default). */
  readonly unit: string;
  readonly description: string;
  /** OpenTelemetry's `ValueType`. */
  readonly valueType: 'int' | 'double';
  /** Every metric attribute key its points may carry, in contract order. */
  readonly attributes: readonly string[];
}

/** One row of {@link INSTRUMENTS}: a histogram is always created with its advised buckets. */
export type InstrumentEntry =
  | (InstrumentFacts & { readonly kind: 'histogram'; readonly boundaries: readonly number[] })
  | (InstrumentFacts & { readonly kind: Exclude<InstrumentKind, 'histogram'>; readonly boundaries?: undefined });

/** The allowed values of every metric attribute key with a bounded set (the others match a name pattern). */
export const ATTRIBUTE_VALUES: Readonly<Record<string, readonly string[]>> = {
  [ATTR_OPERATION]: OPERATIONS,
  [ATTR_EXECUTOR]: EXECUTORS,
  [ATTR_OPERATION_OUTCOME]: OUTCOMES,
  [ATTR_CONCURRENCY_COMPONENT]: COMPONENTS,
  [ATTR_V8JS_GC_TYPE]: V8JS_GC_TYPES,
  [ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT]: HTTP_POOL_QUEUE_CONSTRAINTS,
  [ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME]: HTTP_POOL_QUEUE_OUTCOMES,
};

// Histogram bucket boundaries, read as `INSTRUMENTS.<id>.boundaries`; `docs/telemetry.md` names
// each list by its name here. The `gym.*` lists are exactly those of Gym's Python servers: both
// kinds of server feed the same dashboards, so a different bucket would split a series.
export const OPERATION_BOUNDARIES_MS = [
  1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000, 300000, 1800000,
] as const;

export const GYM_DURATION_BOUNDARIES_MS = [
  100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1200000, 1800000, 3600000,
] as const;

export const SANDBOX_DURATION_BOUNDARIES_MS = [
  250, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000,
] as const;

/** 1 ms (a healthy loop) to 10 s (a stalled one). */
export const LAG_BOUNDARIES_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000] as const;

/** Gym's `SERVER_STARTUP_BOUNDARIES_MS`: 100 ms (a warm server) to one hour (a cold install, a local model load). */
export const SERVER_STARTUP_BOUNDARIES_MS = [
  100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000,
] as const;

/** The semantic conventions' advice (v1.42+, also `@opentelemetry/instrumentation-runtime-node`'s), in seconds. */
export const V8JS_GC_DURATION_BOUNDARIES_S = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
] as const;

/** 10 µs to 30 s. */
export const HTTP_POOL_QUEUE_DURATION_BOUNDARIES_MS = [
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 5000, 30000,
] as const;

const OPERATION_ATTRIBUTES = [ATTR_OPERATION, ATTR_EXECUTOR] as const;
/** The server name only when the limit was given one. */
const CONCURRENCY_ATTRIBUTES = [ATTR_CONCURRENCY_COMPONENT, ATTR_CONCURRENCY_LIMIT_NAME, ATTR_SERVER_NAME] as const;
const PROVIDER_ATTRIBUTES = [ATTR_SANDBOX_PROVIDER] as const;
const NONE = [] as const;

/**
 * Every instrument the packages create, keyed by a short id, in contract order. A new instrument
 * is one entry here (its buckets a named list above) and one row in `docs/telemetry.md`.
 */
export const INSTRUMENTS = {
  operationQueueDuration: {
    name: 'gym.resources.operation.queue_duration_ms',
    kind: 'histogram',
    unit: 'ms',
    description: 'Time from asking a limit to holding it.',
    valueType: 'double',
    attributes: OPERATION_ATTRIBUTES,
    boundaries: OPERATION_BOUNDARIES_MS,
  },
  operationDuration: {
    name: 'gym.resources.operation.duration_ms',
    kind: 'histogram',
    unit: 'ms',
    description: 'Time running inside a limit, by outcome.',
    valueType: 'double',
    attributes: [...OPERATION_ATTRIBUTES, ATTR_OPERATION_OUTCOME],
    boundaries: OPERATION_BOUNDARIES_MS,
  },
  operationQueued: {
    name: 'gym.resources.operation.queued',
    kind: 'observable up-down counter',
    unit: '{operation}',
    description: 'Operations waiting for their limit now.',
    valueType: 'int',
    attributes: OPERATION_ATTRIBUTES,
  },
  operationActive: {
    name: 'gym.resources.operation.active',
    kind: 'observable up-down counter',
    unit: '{operation}',
    description: 'Operations running inside their limit now.',
    valueType: 'int',
    attributes: OPERATION_ATTRIBUTES,
  },
  rolloutDuration: {
    name: 'gym.rollout.duration_ms',
    kind: 'histogram',
    unit: 'ms',
    description: 'One rollout, end to end.',
    valueType: 'double',
    attributes: NONE,
    boundaries: GYM_DURATION_BOUNDARIES_MS,
  },
  verifyDuration: {
    name: 'gym.verify.duration_ms',
    kind: 'histogram',
    unit: 'ms',
    description: 'One verify call.',
    valueType: 'double',
    attributes: NONE,
    boundaries: GYM_DURATION_BOUNDARIES_MS,
  },
  verifySuccessRate: {
    name: 'gym.verify.success_rate',
    kind: 'gauge',
    unit: '1',
    description: 'Fraction of verify calls that completed, cumulative since this process started.',
    valueType: 'double',
    attributes: NONE,
  },
  // No unit: an instrument's identity is (name, kind, unit), and a unit Gym's Python servers
  // do not set would split the series.
  serversActive: {
    name: 'gym.servers.active',
    kind: 'gauge',
    unit: '',
    description: 'Servers in the fleet, as the orchestrator last set it.',
    valueType: 'double',
    attributes: NONE,
  },
  concurrencyLimit: {
    name: 'gym.concurrency.limit',
    kind: 'observable gauge',
    unit: '{slot}',
    description: 'Slots of the limit.',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  concurrencyActive: {
    name: 'gym.concurrency.active',
    kind: 'observable gauge',
    unit: '{slot}',
    description: 'Slots held now.',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  concurrencyAvailable: {
    name: 'gym.concurrency.available',
    kind: 'observable gauge',
    unit: '{slot}',
    description: 'Slots free now (limit - active, never negative).',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  concurrencyQueueDepth: {
    name: 'gym.concurrency.queue_depth',
    kind: 'observable gauge',
    unit: '{waiter}',
    description: 'Callers waiting for a slot now.',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  admissionTimeouts: {
    name: 'gym.concurrency.admission_timeouts_total',
    kind: 'observable counter',
    unit: '{wait}',
    description: 'Waits that ran out of admission time.',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  admissionCancelled: {
    name: 'gym.concurrency.admission_cancelled_total',
    kind: 'observable counter',
    unit: '{wait}',
    description: 'Waits ended by the caller (aborted).',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  admissionRejected: {
    name: 'gym.concurrency.admission_rejected_total',
    kind: 'observable counter',
    unit: '{wait}',
    description: 'Calls refused at once: the queue was full.',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  concurrencyOldestWait: {
    name: 'gym.concurrency.oldest_wait_ms',
    kind: 'observable gauge',
    unit: 'ms',
    description: 'Age of the oldest call waiting for a slot now; 0 when nobody waits.',
    valueType: 'double',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  eventLoopLag: {
    name: 'gym.event_loop.lag_ms',
    kind: 'histogram',
    unit: 'ms',
    description: 'How late a timer that asked to wake after a fixed interval actually woke.',
    valueType: 'double',
    attributes: NONE,
    boundaries: LAG_BOUNDARIES_MS,
  },
  requestsInFlight: {
    name: 'gym.server.requests.in_flight',
    kind: 'up-down counter',
    unit: '{request}',
    description: 'HTTP requests between arrival and response end or client abort.',
    valueType: 'int',
    attributes: [ATTR_SERVER_NAME],
  },
  processCpuTime: {
    name: 'process.cpu.time',
    kind: 'observable counter',
    unit: 's',
    description: 'Total CPU seconds broken down by different CPU modes.',
    valueType: 'double',
    attributes: [ATTR_CPU_MODE],
  },
  processMemoryUsage: {
    name: 'process.memory.usage',
    kind: 'observable up-down counter',
    unit: 'By',
    description: 'The amount of physical memory in use (resident set size).',
    valueType: 'int',
    attributes: NONE,
  },
  processThreadCount: {
    name: 'process.thread.count',
    kind: 'observable up-down counter',
    unit: '{thread}',
    description: 'Process threads count.',
    valueType: 'int',
    attributes: NONE,
  },
  processOpenFds: {
    name: 'process.open_file_descriptor.count',
    kind: 'observable up-down counter',
    unit: '{file_descriptor}',
    description: 'Number of file descriptors in use by the process.',
    valueType: 'int',
    attributes: NONE,
  },
  gcDuration: {
    name: 'v8js.gc.duration',
    kind: 'histogram',
    unit: 's',
    description: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    valueType: 'double',
    attributes: [ATTR_V8JS_GC_TYPE],
    boundaries: V8JS_GC_DURATION_BOUNDARIES_S,
  },
  serverStartupStageDuration: {
    name: 'gym.server.startup_stage_duration_ms',
    kind: 'histogram',
    unit: 'ms',
    description: "Wall-clock time of one stage of a server's startup, from the process's start to serving.",
    valueType: 'double',
    attributes: [ATTR_SERVER_NAME, ATTR_STARTUP_STAGE],
    boundaries: SERVER_STARTUP_BOUNDARIES_MS,
  },
  sandboxActive: {
    name: 'gym.sandbox.active',
    kind: 'up-down counter',
    unit: '{sandbox}',
    description: 'Sandboxes held right now by this process.',
    valueType: 'int',
    attributes: PROVIDER_ATTRIBUTES,
  },
  sandboxStartupDuration: {
    name: 'gym.sandbox.startup_duration_ms',
    kind: 'histogram',
    unit: 'ms',
    description: 'Time to create one sandbox, retries included.',
    valueType: 'double',
    attributes: PROVIDER_ATTRIBUTES,
    boundaries: SANDBOX_DURATION_BOUNDARIES_MS,
  },
  sandboxExecDuration: {
    name: 'gym.sandbox.exec_duration_ms',
    kind: 'histogram',
    unit: 'ms',
    description: 'One exec inside a sandbox.',
    valueType: 'double',
    attributes: PROVIDER_ATTRIBUTES,
    boundaries: SANDBOX_DURATION_BOUNDARIES_MS,
  },
  // Gym publishes no attributes for it; it follows its siblings (provider only, so uploads and
  // downloads share one series).
  sandboxTransferDuration: {
    name: 'gym.sandbox.transfer_duration_ms',
    kind: 'histogram',
    unit: 'ms',
    description: 'One upload into or download out of a sandbox.',
    valueType: 'double',
    attributes: PROVIDER_ATTRIBUTES,
    boundaries: SANDBOX_DURATION_BOUNDARIES_MS,
  },
  sandboxCreateRetry: {
    name: 'gym.sandbox.create_retry_total',
    kind: 'counter',
    unit: '1',
    description: 'Sandbox create attempts retried.',
    valueType: 'int',
    attributes: PROVIDER_ATTRIBUTES,
  },
  httpPoolQueueDuration: {
    name: 'gym.http.connection_pool.queue_duration_ms',
    kind: 'histogram',
    unit: 'ms',
    description: 'Time one queued connection acquisition waited for a pool slot.',
    valueType: 'double',
    attributes: [
      ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT,
      ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME,
      ATTR_HTTP_DESTINATION_SERVER_NAME,
    ],
    boundaries: HTTP_POOL_QUEUE_DURATION_BOUNDARIES_MS,
  },
  httpPoolConnectTotal: {
    name: 'gym.http.connection_pool.connect_total',
    kind: 'observable counter',
    unit: '{connection}',
    description:
      'Outgoing requests that asked a connection pool for a connection, including ones that later failed or were abandoned.',
    valueType: 'int',
    attributes: [ATTR_HTTP_DESTINATION_SERVER_NAME],
  },
} as const satisfies Record<string, InstrumentEntry>;

export type InstrumentId = keyof typeof INSTRUMENTS;
