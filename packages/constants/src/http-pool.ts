// Outgoing HTTP connection-pool telemetry: Gym's `gym.http.connection_pool.*` names, attribute
// keys, bounded values and buckets, exactly as Gym's Python servers record them for aiohttp.

/** Histogram (ms): how long one queued request waited for a pool connection. A point only for requests that queued. */
export const METRIC_HTTP_POOL_QUEUE_DURATION = 'gym.http.connection_pool.queue_duration_ms' as const;
/** Observable counter (`{connection}`): every request that asked the pool for a connection, queued or not, including ones that later failed or were abandoned. */
export const METRIC_HTTP_POOL_CONNECT_TOTAL = 'gym.http.connection_pool.connect_total' as const;
/** Unit of {@link METRIC_HTTP_POOL_CONNECT_TOTAL}. */
export const UNIT_CONNECTION = '{connection}' as const;

/** Metric attribute: the bounded name of the server a request goes to; {@link HTTP_DESTINATION_EXTERNAL} when unnamed. */
export const ATTR_HTTP_DESTINATION_SERVER_NAME = 'nemo.gym.http.destination.server.name' as const;
/** The destination name of an origin the caller did not name. */
export const HTTP_DESTINATION_EXTERNAL = 'external' as const;
/** Metric attribute: which limit made the request wait, one of {@link HTTP_POOL_QUEUE_CONSTRAINTS}. */
export const ATTR_HTTP_POOL_QUEUE_CONSTRAINT = 'nemo.gym.http.connection_pool.queue_constraint' as const;
/** Metric attribute: how the wait ended, one of {@link HTTP_POOL_QUEUE_OUTCOMES}. */
export const ATTR_HTTP_POOL_QUEUE_OUTCOME = 'nemo.gym.http.connection_pool.queue_outcome' as const;

/** Gym's values of {@link ATTR_HTTP_POOL_QUEUE_CONSTRAINT}: the pool's total cap, its per-destination cap, or not known. */
export const HTTP_POOL_QUEUE_CONSTRAINTS = ['total', 'per_host', 'unknown'] as const;
/** One of {@link HTTP_POOL_QUEUE_CONSTRAINTS}. */
export type HttpPoolQueueConstraint = (typeof HTTP_POOL_QUEUE_CONSTRAINTS)[number];
/** Gym's values of {@link ATTR_HTTP_POOL_QUEUE_OUTCOME}: the wait got a connection, or it was given up first. */
export const HTTP_POOL_QUEUE_OUTCOMES = ['ok', 'abandoned'] as const;
/** One of {@link HTTP_POOL_QUEUE_OUTCOMES}. */
export type HttpPoolQueueOutcome = (typeof HTTP_POOL_QUEUE_OUTCOMES)[number];

/** Gym's buckets of {@link METRIC_HTTP_POOL_QUEUE_DURATION}: 10 µs to 30 s. */
export const HTTP_POOL_QUEUE_DURATION_BOUNDARIES_MS = [
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 5000, 30000,
] as const;
