// Concurrency limits: Gym main's `gym.concurrency.*` series, by exactly Gym's names and
// attribute keys, plus `admission_rejected_total` (a full queue), which Gym lacks.
// Curly-brace units are annotations: no Prometheus pipeline turns them into a name suffix.

/** Where a metered limit sits. Bounded: a metric attribute value. Ours, aligned to the places Gym limits concurrency. */
export const COMPONENTS = ['rollout_driver', 'agent', 'model', 'resources', 'sandbox', 'other'] as const;
/** One of {@link COMPONENTS}. */
export type Component = (typeof COMPONENTS)[number];

const componentSet: ReadonlySet<string> = new Set(COMPONENTS);
/** True when `value` is one of {@link COMPONENTS} (a string primitive, nothing that merely converts to one). */
export function isComponent(value: unknown): value is Component {
  return typeof value === 'string' && componentSet.has(value);
}

/** What a limit name must look like: chosen in code, bounded, never an id. */
export const LIMIT_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
/** At most this many distinct limit names are exported per process; more are refused. */
export const MAX_LIMIT_NAMES = 64 as const;

/** Metric attribute: one of {@link COMPONENTS}. */
export const ATTR_CONCURRENCY_COMPONENT = 'nemo.gym.concurrency.component' as const;
/** Metric attribute: the limit's name, matching {@link LIMIT_NAME_PATTERN}. */
export const ATTR_CONCURRENCY_LIMIT_NAME = 'nemo.gym.concurrency.limit_name' as const;

/** Observable gauge (`{slot}`): configured slots. */
export const METRIC_CONCURRENCY_LIMIT = 'gym.concurrency.limit' as const;
/** Observable gauge (`{slot}`): slots held right now. */
export const METRIC_CONCURRENCY_ACTIVE = 'gym.concurrency.active' as const;
/** Observable gauge (`{slot}`): limit − active, never negative. */
export const METRIC_CONCURRENCY_AVAILABLE = 'gym.concurrency.available' as const;
/** Observable gauge (`{waiter}`): callers waiting for a slot right now. */
export const METRIC_CONCURRENCY_QUEUE_DEPTH = 'gym.concurrency.queue_depth' as const;
/** Observable counter (`{wait}`): waits that ran out of admission time. No point for a limit without a deadline. */
export const METRIC_CONCURRENCY_ADMISSION_TIMEOUTS = 'gym.concurrency.admission_timeouts_total' as const;
/** Observable counter (`{wait}`): waits aborted by the caller's signal. */
export const METRIC_CONCURRENCY_ADMISSION_CANCELLED = 'gym.concurrency.admission_cancelled_total' as const;
/** Observable counter (`{wait}`): calls refused at once because the queue was full (beyond Gym). */
export const METRIC_CONCURRENCY_ADMISSION_REJECTED = 'gym.concurrency.admission_rejected_total' as const;

/** Unit of the slot gauges. */
export const UNIT_SLOT = '{slot}' as const;
/** Unit of the queue depth gauge. */
export const UNIT_WAITER = '{waiter}' as const;
/** Unit of the admission counters. */
export const UNIT_WAIT = '{wait}' as const;

/** The seven concurrency instruments, in contract order. */
export const CONCURRENCY_INSTRUMENTS = [
  METRIC_CONCURRENCY_LIMIT,
  METRIC_CONCURRENCY_ACTIVE,
  METRIC_CONCURRENCY_AVAILABLE,
  METRIC_CONCURRENCY_QUEUE_DEPTH,
  METRIC_CONCURRENCY_ADMISSION_TIMEOUTS,
  METRIC_CONCURRENCY_ADMISSION_CANCELLED,
  METRIC_CONCURRENCY_ADMISSION_REJECTED,
] as const;
