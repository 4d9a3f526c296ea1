// Every instrument the packages create, with every fact of it: name, kind, unit, description,
// value type, metric attribute keys and buckets. The packages create their instruments from
// these entries (through @gym/core's `createInstrument`), `docs/telemetry.md` states them and
// `test/telemetry-doc.test.ts` holds the two together, so a fact changes here and nowhere else.
// `gym.server.request_duration_ms` is not here: it is declared and never created.

import { ATTR_EXECUTOR, ATTR_OPERATION, ATTR_OUTCOME, ATTR_SERVER_NAME } from './attributes.js';
import { GYM_DURATION_BOUNDARIES_MS, OPERATION_BOUNDARIES_MS, SANDBOX_DURATION_BOUNDARIES_MS } from './boundaries.js';
import { COMPONENTS, EXECUTORS, OPERATIONS, OUTCOMES } from './bounded-sets.js';
import {
  ATTR_CONCURRENCY_COMPONENT,
  ATTR_CONCURRENCY_LIMIT_NAME,
  METRIC_CONCURRENCY_ACTIVE,
  METRIC_CONCURRENCY_ADMISSION_CANCELLED,
  METRIC_CONCURRENCY_ADMISSION_REJECTED,
  METRIC_CONCURRENCY_ADMISSION_TIMEOUTS,
  METRIC_CONCURRENCY_AVAILABLE,
  METRIC_CONCURRENCY_LIMIT,
  METRIC_CONCURRENCY_OLDEST_WAIT,
  METRIC_CONCURRENCY_QUEUE_DEPTH,
} from './concurrency.js';
import {
  ATTR_HTTP_DESTINATION_SERVER_NAME,
  ATTR_HTTP_POOL_QUEUE_CONSTRAINT,
  ATTR_HTTP_POOL_QUEUE_OUTCOME,
  HTTP_POOL_QUEUE_CONSTRAINTS,
  HTTP_POOL_QUEUE_DURATION_BOUNDARIES_MS,
  HTTP_POOL_QUEUE_OUTCOMES,
  METRIC_HTTP_POOL_CONNECT_TOTAL,
  METRIC_HTTP_POOL_QUEUE_DURATION,
  UNIT_CONNECTION,
} from './http-pool.js';
import {
  METRIC_OPERATION_ACTIVE,
  METRIC_OPERATION_DURATION,
  METRIC_OPERATION_QUEUE_DURATION,
  METRIC_OPERATION_QUEUED,
  METRIC_ROLLOUT_DURATION,
  METRIC_SERVERS_ACTIVE,
  METRIC_VERIFY_DURATION,
  METRIC_VERIFY_SUCCESS_RATE,
} from './instruments.js';
import {
  ATTR_CPU_MODE,
  ATTR_V8JS_GC_TYPE,
  LAG_BOUNDARIES_MS,
  METRIC_EVENT_LOOP_LAG,
  METRIC_PROCESS_CPU_TIME,
  METRIC_PROCESS_MEMORY_USAGE,
  METRIC_PROCESS_OPEN_FD_COUNT,
  METRIC_PROCESS_THREAD_COUNT,
  METRIC_REQUESTS_IN_FLIGHT,
  METRIC_V8JS_GC_DURATION,
  V8JS_GC_DURATION_BOUNDARIES_S,
  V8JS_GC_TYPES,
} from './observer.js';
import {
  ATTR_SANDBOX_PROVIDER,
  METRIC_SANDBOX_ACTIVE,
  METRIC_SANDBOX_CREATE_RETRY,
  METRIC_SANDBOX_EXEC_DURATION,
  METRIC_SANDBOX_STARTUP_DURATION,
  METRIC_SANDBOX_TRANSFER_DURATION,
} from './sandbox-lifecycle.js';
import { ATTR_STARTUP_STAGE, METRIC_SERVER_STARTUP_STAGE_DURATION, SERVER_STARTUP_BOUNDARIES_MS } from './startup.js';

/** The kinds of OpenTelemetry instrument, in the words `docs/telemetry.md` uses. */
export const INSTRUMENT_KINDS = [
  'histogram',
  'counter',
  'up-down counter',
  'gauge',
  'observable counter',
  'observable up-down counter',
  'observable gauge',
] as const;
export type InstrumentKind = (typeof INSTRUMENT_KINDS)[number];

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
  [ATTR_OUTCOME]: OUTCOMES,
  [ATTR_CONCURRENCY_COMPONENT]: COMPONENTS,
  [ATTR_V8JS_GC_TYPE]: V8JS_GC_TYPES,
  [ATTR_HTTP_POOL_QUEUE_CONSTRAINT]: HTTP_POOL_QUEUE_CONSTRAINTS,
  [ATTR_HTTP_POOL_QUEUE_OUTCOME]: HTTP_POOL_QUEUE_OUTCOMES,
};

const OPERATION_ATTRIBUTES = [ATTR_OPERATION, ATTR_EXECUTOR] as const;
/** The server name only when the limit was given one. */
const CONCURRENCY_ATTRIBUTES = [ATTR_CONCURRENCY_COMPONENT, ATTR_CONCURRENCY_LIMIT_NAME, ATTR_SERVER_NAME] as const;
const PROVIDER_ATTRIBUTES = [ATTR_SANDBOX_PROVIDER] as const;
const NONE = [] as const;

/**
 * Every instrument the packages create, keyed by a short id, in contract order. A new instrument
 * is one entry here (its buckets an exported `*_BOUNDARIES_*` list) and one row in `docs/telemetry.md`.
 */
export const INSTRUMENTS = {
  operationQueueDuration: {
    name: METRIC_OPERATION_QUEUE_DURATION,
    kind: 'histogram',
    unit: 'ms',
    description: 'Time from asking a limit to holding it.',
    valueType: 'double',
    attributes: OPERATION_ATTRIBUTES,
    boundaries: OPERATION_BOUNDARIES_MS,
  },
  operationDuration: {
    name: METRIC_OPERATION_DURATION,
    kind: 'histogram',
    unit: 'ms',
    description: 'Time running inside a limit, by outcome.',
    valueType: 'double',
    attributes: [...OPERATION_ATTRIBUTES, ATTR_OUTCOME],
    boundaries: OPERATION_BOUNDARIES_MS,
  },
  operationQueued: {
    name: METRIC_OPERATION_QUEUED,
    kind: 'observable up-down counter',
    unit: '{operation}',
    description: 'Operations waiting for their limit now.',
    valueType: 'int',
    attributes: OPERATION_ATTRIBUTES,
  },
  operationActive: {
    name: METRIC_OPERATION_ACTIVE,
    kind: 'observable up-down counter',
    unit: '{operation}',
    description: 'Operations running inside their limit now.',
    valueType: 'int',
    attributes: OPERATION_ATTRIBUTES,
  },
  rolloutDuration: {
    name: METRIC_ROLLOUT_DURATION,
    kind: 'histogram',
    unit: 'ms',
    description: 'One rollout, end to end.',
    valueType: 'double',
    attributes: NONE,
    boundaries: GYM_DURATION_BOUNDARIES_MS,
  },
  verifyDuration: {
    name: METRIC_VERIFY_DURATION,
    kind: 'histogram',
    unit: 'ms',
    description: 'One verify call.',
    valueType: 'double',
    attributes: NONE,
    boundaries: GYM_DURATION_BOUNDARIES_MS,
  },
  verifySuccessRate: {
    name: METRIC_VERIFY_SUCCESS_RATE,
    kind: 'gauge',
    unit: '1',
    description: 'Fraction of verify calls that completed, cumulative since this process started.',
    valueType: 'double',
    attributes: NONE,
  },
  // No unit: an instrument's identity is (name, kind, unit), and a unit Gym's Python servers
  // do not set would split the series.
  serversActive: {
    name: METRIC_SERVERS_ACTIVE,
    kind: 'gauge',
    unit: '',
    description: 'Servers in the fleet, as the orchestrator last set it.',
    valueType: 'double',
    attributes: NONE,
  },
  concurrencyLimit: {
    name: METRIC_CONCURRENCY_LIMIT,
    kind: 'observable gauge',
    unit: '{slot}',
    description: 'Slots of the limit.',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  concurrencyActive: {
    name: METRIC_CONCURRENCY_ACTIVE,
    kind: 'observable gauge',
    unit: '{slot}',
    description: 'Slots held now.',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  concurrencyAvailable: {
    name: METRIC_CONCURRENCY_AVAILABLE,
    kind: 'observable gauge',
    unit: '{slot}',
    description: 'Slots free now (limit - active, never negative).',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  concurrencyQueueDepth: {
    name: METRIC_CONCURRENCY_QUEUE_DEPTH,
    kind: 'observable gauge',
    unit: '{waiter}',
    description: 'Callers waiting for a slot now.',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  admissionTimeouts: {
    name: METRIC_CONCURRENCY_ADMISSION_TIMEOUTS,
    kind: 'observable counter',
    unit: '{wait}',
    description: 'Waits that ran out of admission time.',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  admissionCancelled: {
    name: METRIC_CONCURRENCY_ADMISSION_CANCELLED,
    kind: 'observable counter',
    unit: '{wait}',
    description: 'Waits ended by the caller (aborted).',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  admissionRejected: {
    name: METRIC_CONCURRENCY_ADMISSION_REJECTED,
    kind: 'observable counter',
    unit: '{wait}',
    description: 'Calls refused at once: the queue was full.',
    valueType: 'int',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  concurrencyOldestWait: {
    name: METRIC_CONCURRENCY_OLDEST_WAIT,
    kind: 'observable gauge',
    unit: 'ms',
    description: 'Age of the oldest call waiting for a slot now; 0 when nobody waits.',
    valueType: 'double',
    attributes: CONCURRENCY_ATTRIBUTES,
  },
  eventLoopLag: {
    name: METRIC_EVENT_LOOP_LAG,
    kind: 'histogram',
    unit: 'ms',
    description: 'How late a timer that asked to wake after a fixed interval actually woke.',
    valueType: 'double',
    attributes: NONE,
    boundaries: LAG_BOUNDARIES_MS,
  },
  requestsInFlight: {
    name: METRIC_REQUESTS_IN_FLIGHT,
    kind: 'up-down counter',
    unit: '{request}',
    description: 'HTTP requests between arrival and response end or client abort.',
    valueType: 'int',
    attributes: [ATTR_SERVER_NAME],
  },
  processCpuTime: {
    name: METRIC_PROCESS_CPU_TIME,
    kind: 'observable counter',
    unit: 's',
    description: 'Total CPU seconds broken down by different CPU modes.',
    valueType: 'double',
    attributes: [ATTR_CPU_MODE],
  },
  processMemoryUsage: {
    name: METRIC_PROCESS_MEMORY_USAGE,
    kind: 'observable up-down counter',
    unit: 'By',
    description: 'The amount of physical memory in use (resident set size).',
    valueType: 'int',
    attributes: NONE,
  },
  processThreadCount: {
    name: METRIC_PROCESS_THREAD_COUNT,
    kind: 'observable up-down counter',
    unit: '{thread}',
    description: 'Process threads count.',
    valueType: 'int',
    attributes: NONE,
  },
  processOpenFds: {
    name: METRIC_PROCESS_OPEN_FD_COUNT,
    kind: 'observable up-down counter',
    unit: '{file_descriptor}',
    description: 'Number of file descriptors in use by the process.',
    valueType: 'int',
    attributes: NONE,
  },
  gcDuration: {
    name: METRIC_V8JS_GC_DURATION,
    kind: 'histogram',
    unit: 's',
    description: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    valueType: 'double',
    attributes: [ATTR_V8JS_GC_TYPE],
    boundaries: V8JS_GC_DURATION_BOUNDARIES_S,
  },
  serverStartupStageDuration: {
    name: METRIC_SERVER_STARTUP_STAGE_DURATION,
    kind: 'histogram',
    unit: 'ms',
    description: "Wall-clock time of one stage of a server's startup, from the process's start to serving.",
    valueType: 'double',
    attributes: [ATTR_SERVER_NAME, ATTR_STARTUP_STAGE],
    boundaries: SERVER_STARTUP_BOUNDARIES_MS,
  },
  sandboxActive: {
    name: METRIC_SANDBOX_ACTIVE,
    kind: 'up-down counter',
    unit: '{sandbox}',
    description: 'Sandboxes held right now by this process.',
    valueType: 'int',
    attributes: PROVIDER_ATTRIBUTES,
  },
  sandboxStartupDuration: {
    name: METRIC_SANDBOX_STARTUP_DURATION,
    kind: 'histogram',
    unit: 'ms',
    description: 'Time to create one sandbox, retries included.',
    valueType: 'double',
    attributes: PROVIDER_ATTRIBUTES,
    boundaries: SANDBOX_DURATION_BOUNDARIES_MS,
  },
  sandboxExecDuration: {
    name: METRIC_SANDBOX_EXEC_DURATION,
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
    name: METRIC_SANDBOX_TRANSFER_DURATION,
    kind: 'histogram',
    unit: 'ms',
    description: 'One upload into or download out of a sandbox.',
    valueType: 'double',
    attributes: PROVIDER_ATTRIBUTES,
    boundaries: SANDBOX_DURATION_BOUNDARIES_MS,
  },
  sandboxCreateRetry: {
    name: METRIC_SANDBOX_CREATE_RETRY,
    kind: 'counter',
    unit: '1',
    description: 'Sandbox create attempts retried.',
    valueType: 'int',
    attributes: PROVIDER_ATTRIBUTES,
  },
  httpPoolQueueDuration: {
    name: METRIC_HTTP_POOL_QUEUE_DURATION,
    kind: 'histogram',
    unit: 'ms',
    description: 'Time one queued connection acquisition waited for a pool slot.',
    valueType: 'double',
    attributes: [ATTR_HTTP_POOL_QUEUE_CONSTRAINT, ATTR_HTTP_POOL_QUEUE_OUTCOME, ATTR_HTTP_DESTINATION_SERVER_NAME],
    boundaries: HTTP_POOL_QUEUE_DURATION_BOUNDARIES_MS,
  },
  httpPoolConnectTotal: {
    name: METRIC_HTTP_POOL_CONNECT_TOTAL,
    kind: 'observable counter',
    unit: UNIT_CONNECTION,
    description:
      'Outgoing requests that asked a connection pool for a connection, including ones that later failed or were abandoned.',
    valueType: 'int',
    attributes: [ATTR_HTTP_DESTINATION_SERVER_NAME],
  },
} as const satisfies Record<string, InstrumentEntry>;

export type InstrumentId = keyof typeof INSTRUMENTS;
