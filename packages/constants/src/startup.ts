// Gym's server startup timeline: one histogram point per startup stage, and (under the
// `startup` span group) the stages as spans under one server span that covers them exactly,
// joined to the supervisor's trace through `TRACEPARENT`. Names, attribute keys and buckets are
// Gym's (`nemo_gym/telemetry/gym_metrics.py` and `startup.py`).

export const METRIC_SERVER_STARTUP_STAGE_DURATION = 'gym.server.startup_stage_duration_ms' as const;
export const ATTR_STARTUP_STAGE = 'nemo.gym.startup.stage' as const;
/** A span attribute of the server span only, never a metric attribute. */
export const ATTR_PROCESS_PID = 'process.pid' as const;
/** 1 to 64 of `A-Z a-z 0-9 _ -`, starting with a letter (no dots: it is also a span-name suffix). */
export const STARTUP_STAGE_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/** At most this many stages per timeline (Node's own stages included); later marks are ignored. */
export const MAX_STARTUP_STAGES = 32 as const;
/** From the process's time origin to `performance.nodeTiming.bootstrapComplete`. */
export const STARTUP_STAGE_NODE_BOOTSTRAP = 'node_bootstrap' as const;
/** Ends at `performance.nodeTiming.loopStart`. */
export const STARTUP_STAGE_LOOP_START = 'loop_start' as const;

/** Gym's `SERVER_STARTUP_BOUNDARIES_MS`: 100 ms (a warm server) to one hour (a cold install, a local model load). */
export const SERVER_STARTUP_BOUNDARIES_MS = [
  100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000,
] as const;

/** The server's span: covers its stages exactly; its parent is the trace in `TRACEPARENT`, when valid. */
export const SPAN_SERVER_STARTUP = 'gym.server.startup' as const;
/** The supervisor's span over the whole fleet startup; its own stages are `gym.startup.<stage>`. */
export const SPAN_STARTUP = 'gym.startup' as const;
/** The supervisor's span per server, from spawn to the first answered readiness probe. */
export const SPAN_STARTUP_SERVER = 'gym.startup.server' as const;

/** OpenTelemetry's environment carrier name for the parent span's W3C `traceparent`. */
export const ENV_TRACEPARENT = 'TRACEPARENT' as const;
