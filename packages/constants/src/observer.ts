// What slows a Node server: event-loop lag (Gym's name), requests in flight (Gym's name), and
// OpenTelemetry's own process.* and v8js.* names for process and garbage-collection metrics.

/** Histogram (ms): how late a timer that asked to wake after a fixed interval actually woke. No attributes. */
export const METRIC_EVENT_LOOP_LAG = 'gym.event_loop.lag_ms' as const;
/** Up-down counter (`{request}`): HTTP requests between arrival and response end or abort. Attribute: server name when given. */
export const METRIC_REQUESTS_IN_FLIGHT = 'gym.server.requests.in_flight' as const;
/** Unit of {@link METRIC_REQUESTS_IN_FLIGHT}. */
export const UNIT_REQUEST = '{request}' as const;
/** What a server name must look like to be the `nemo.gym.server.name` attribute of {@link METRIC_REQUESTS_IN_FLIGHT} (bounded, never an id). */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Buckets of `gym.event_loop.lag_ms`: 1 ms (a healthy loop) to 10 s (a stalled one). */
export const LAG_BOUNDARIES_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000] as const;

/** Counter (`s`): CPU time by `cpu.mode` (`user` | `system`). OpenTelemetry's name, also Gym's. */
export const METRIC_PROCESS_CPU_TIME = 'process.cpu.time' as const;
/** Up-down counter / gauge (`By`): resident memory. OpenTelemetry's name, also Gym's. */
export const METRIC_PROCESS_MEMORY_USAGE = 'process.memory.usage' as const;
/** Gauge (`{thread}`): threads of the process. OpenTelemetry's name, also Gym's. */
export const METRIC_PROCESS_THREAD_COUNT = 'process.thread.count' as const;
/** Gauge (`{file_descriptor}`): open file descriptors. OpenTelemetry's name, also Gym's. */
export const METRIC_PROCESS_OPEN_FD_COUNT = 'process.open_file_descriptor.count' as const;
/** Unit of {@link METRIC_PROCESS_OPEN_FD_COUNT}, as the semantic conventions spell it. */
export const UNIT_FILE_DESCRIPTOR = '{file_descriptor}' as const;
/** Attribute of {@link METRIC_PROCESS_CPU_TIME}. */
export const ATTR_CPU_MODE = 'cpu.mode' as const;
/** Histogram (`s`): V8 garbage-collection pause, by `v8js.gc.type`. OpenTelemetry's name. */
export const METRIC_V8JS_GC_DURATION = 'v8js.gc.duration' as const;
/** Attribute of {@link METRIC_V8JS_GC_DURATION}: `major` | `minor` | `incremental` | `weakcb`. */
export const ATTR_V8JS_GC_TYPE = 'v8js.gc.type' as const;
/** The values of {@link ATTR_V8JS_GC_TYPE}. */
export const V8JS_GC_TYPES = ['major', 'minor', 'incremental', 'weakcb'] as const;
/** One of {@link V8JS_GC_TYPES}. */
export type V8jsGcType = (typeof V8JS_GC_TYPES)[number];
/**
 * The advised buckets of `v8js.gc.duration`, in seconds: semantic conventions v1.42+ (also what
 * `@opentelemetry/instrumentation-runtime-node` uses), 5 ms to 10 s.
 */
export const V8JS_GC_DURATION_BOUNDARIES_S = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
] as const;
