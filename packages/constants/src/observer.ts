// What slows a Node server: event-loop lag and requests in flight (Gym's names), and
// OpenTelemetry's own process.* and v8js.* names for process and garbage-collection metrics.

export const METRIC_EVENT_LOOP_LAG = 'gym.event_loop.lag_ms' as const;
export const METRIC_REQUESTS_IN_FLIGHT = 'gym.server.requests.in_flight' as const;
/** What a server name must look like to be the `nemo.gym.server.name` attribute (bounded, never an id). */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** 1 ms (a healthy loop) to 10 s (a stalled one). */
export const LAG_BOUNDARIES_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000] as const;

export const METRIC_PROCESS_CPU_TIME = 'process.cpu.time' as const;
export const METRIC_PROCESS_MEMORY_USAGE = 'process.memory.usage' as const;
export const METRIC_PROCESS_THREAD_COUNT = 'process.thread.count' as const;
export const METRIC_PROCESS_OPEN_FD_COUNT = 'process.open_file_descriptor.count' as const;
export const ATTR_CPU_MODE = 'cpu.mode' as const;
export const METRIC_V8JS_GC_DURATION = 'v8js.gc.duration' as const;
export const ATTR_V8JS_GC_TYPE = 'v8js.gc.type' as const;
export const V8JS_GC_TYPES = ['major', 'minor', 'incremental', 'weakcb'] as const;
export type V8jsGcType = (typeof V8JS_GC_TYPES)[number];
/** The semantic conventions' advice (v1.42+, also `@opentelemetry/instrumentation-runtime-node`'s), in seconds. */
export const V8JS_GC_DURATION_BOUNDARIES_S = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
] as const;
