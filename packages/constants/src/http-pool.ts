// Outgoing HTTP connection-pool telemetry: Gym's `gym.http.connection_pool.*` names, attribute
// keys, bounded values and buckets, exactly as Gym's Python servers record them for aiohttp.

export const METRIC_HTTP_POOL_QUEUE_DURATION = 'gym.http.connection_pool.queue_duration_ms' as const;
export const METRIC_HTTP_POOL_CONNECT_TOTAL = 'gym.http.connection_pool.connect_total' as const;
export const UNIT_CONNECTION = '{connection}' as const;

export const ATTR_HTTP_DESTINATION_SERVER_NAME = 'nemo.gym.http.destination.server.name' as const;
/** The destination name of an origin the caller did not name. */
export const HTTP_DESTINATION_EXTERNAL = 'external' as const;
export const ATTR_HTTP_POOL_QUEUE_CONSTRAINT = 'nemo.gym.http.connection_pool.queue_constraint' as const;
export const ATTR_HTTP_POOL_QUEUE_OUTCOME = 'nemo.gym.http.connection_pool.queue_outcome' as const;

/** The pool's total cap, its per-destination cap, or not known. */
export const HTTP_POOL_QUEUE_CONSTRAINTS = ['total', 'per_host', 'unknown'] as const;
/** The wait got a connection, or it was given up first. */
export const HTTP_POOL_QUEUE_OUTCOMES = ['ok', 'abandoned'] as const;
export type HttpPoolQueueOutcome = (typeof HTTP_POOL_QUEUE_OUTCOMES)[number];

/** 10 µs to 30 s. */
export const HTTP_POOL_QUEUE_DURATION_BOUNDARIES_MS = [
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 5000, 30000,
] as const;
