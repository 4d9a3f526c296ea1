// Instrument names. Durations keep Gym's `_ms` names (not OpenTelemetry's seconds
// convention) because Gym's Python servers emit the same names into the same dashboards.

export const METRIC_OPERATION_QUEUE_DURATION = 'gym.resources.operation.queue_duration_ms' as const;
export const METRIC_OPERATION_DURATION = 'gym.resources.operation.duration_ms' as const;
export const METRIC_OPERATION_QUEUED = 'gym.resources.operation.queued' as const;
export const METRIC_OPERATION_ACTIVE = 'gym.resources.operation.active' as const;
export const METRIC_ROLLOUT_DURATION = 'gym.rollout.duration_ms' as const;
export const METRIC_VERIFY_DURATION = 'gym.verify.duration_ms' as const;
export const METRIC_VERIFY_SUCCESS_RATE = 'gym.verify.success_rate' as const;
/** Gym's span around one verify call (span group `verify`), with `nemo.gym.server.name`. */
export const SPAN_VERIFY = 'gym.verify' as const;
/** One writer only: the orchestrator. */
export const METRIC_SERVERS_ACTIVE = 'gym.servers.active' as const;
/**
 * Declared and deliberately never recorded: with no attributes it would merge every route;
 * HTTP server instrumentation's `http.server.request.duration` does that job.
 */
export const METRIC_SERVER_REQUEST_DURATION = 'gym.server.request_duration_ms' as const;

/** The nine `gym.*` instrument names of the Gym dashboards (the "lens" set), in spec order. */
export const GYM_INSTRUMENTS = [
  METRIC_OPERATION_QUEUE_DURATION,
  METRIC_OPERATION_DURATION,
  METRIC_OPERATION_QUEUED,
  METRIC_OPERATION_ACTIVE,
  METRIC_ROLLOUT_DURATION,
  METRIC_VERIFY_DURATION,
  METRIC_VERIFY_SUCCESS_RATE,
  METRIC_SERVERS_ACTIVE,
  METRIC_SERVER_REQUEST_DURATION,
] as const;
