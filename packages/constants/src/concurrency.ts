// Concurrency limits: Gym main's `gym.concurrency.*` series, by exactly Gym's names and
// attribute keys, plus `admission_rejected_total` (a full queue) and `oldest_wait_ms` (a stuck
// queue), which Gym lacks.

/** What a limit name must look like: chosen in code, bounded, never an id. */
export const LIMIT_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
/** At most this many distinct limit names are exported per process; more are refused. */
export const MAX_LIMIT_NAMES = 64 as const;

export const ATTR_CONCURRENCY_COMPONENT = 'nemo.gym.concurrency.component' as const;
export const ATTR_CONCURRENCY_LIMIT_NAME = 'nemo.gym.concurrency.limit_name' as const;

export const METRIC_CONCURRENCY_LIMIT = 'gym.concurrency.limit' as const;
export const METRIC_CONCURRENCY_ACTIVE = 'gym.concurrency.active' as const;
export const METRIC_CONCURRENCY_AVAILABLE = 'gym.concurrency.available' as const;
export const METRIC_CONCURRENCY_QUEUE_DEPTH = 'gym.concurrency.queue_depth' as const;
export const METRIC_CONCURRENCY_ADMISSION_TIMEOUTS = 'gym.concurrency.admission_timeouts_total' as const;
export const METRIC_CONCURRENCY_ADMISSION_CANCELLED = 'gym.concurrency.admission_cancelled_total' as const;
/** Calls refused at once because the queue was full: beyond Gym. */
export const METRIC_CONCURRENCY_ADMISSION_REJECTED = 'gym.concurrency.admission_rejected_total' as const;
/** The age of the oldest call waiting for a slot now, 0 when nobody waits: beyond Gym. */
export const METRIC_CONCURRENCY_OLDEST_WAIT = 'gym.concurrency.oldest_wait_ms' as const;

/** The eight concurrency instruments, in contract order. */
export const CONCURRENCY_INSTRUMENTS = [
  METRIC_CONCURRENCY_LIMIT,
  METRIC_CONCURRENCY_ACTIVE,
  METRIC_CONCURRENCY_AVAILABLE,
  METRIC_CONCURRENCY_QUEUE_DEPTH,
  METRIC_CONCURRENCY_ADMISSION_TIMEOUTS,
  METRIC_CONCURRENCY_ADMISSION_CANCELLED,
  METRIC_CONCURRENCY_ADMISSION_REJECTED,
  METRIC_CONCURRENCY_OLDEST_WAIT,
] as const;
