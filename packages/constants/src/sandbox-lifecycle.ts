// Sandbox lifecycle metrics (Gym main's names), each by the sandbox provider. These are
// metrics, unlike the per-sandbox resource records, which are spans.

/** Metric attribute: the sandbox provider, matching {@link SANDBOX_PROVIDER_PATTERN}. */
export const ATTR_SANDBOX_PROVIDER = 'nemo.gym.sandbox.provider' as const;
/** What a provider name must look like (bounded, never an id). */
export const SANDBOX_PROVIDER_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/;

/** Up-down counter (`{sandbox}`): sandboxes held right now. */
export const METRIC_SANDBOX_ACTIVE = 'gym.sandbox.active' as const;
/** Histogram (ms, SANDBOX_DURATION_BOUNDARIES_MS): time to create a sandbox. */
export const METRIC_SANDBOX_STARTUP_DURATION = 'gym.sandbox.startup_duration_ms' as const;
/** Histogram (ms, SANDBOX_DURATION_BOUNDARIES_MS): one exec inside a sandbox. */
export const METRIC_SANDBOX_EXEC_DURATION = 'gym.sandbox.exec_duration_ms' as const;
/** Counter (`1`): create attempts retried. */
export const METRIC_SANDBOX_CREATE_RETRY = 'gym.sandbox.create_retry_total' as const;
/** Unit of {@link METRIC_SANDBOX_ACTIVE}. */
export const UNIT_SANDBOX = '{sandbox}' as const;
