// Names of the environment variables shared by the fleet. Names only: the one grammar that
// reads them lives in @gym/core.

export const ENV_PREFIX = 'NEMO_GYM_OTEL_' as const;
/** Read when the `NEMO_GYM_OTEL_` variable is unset or blank (the older NeMo Lens name). */
export const ENV_FALLBACK_PREFIX = 'NEMO_LENS_' as const;
/** Trimmed, any case: exactly Gym's. */
export const TRUTHY_WORDS = ['1', 'true', 'yes', 'on'] as const;
export const FALSY_WORDS = ['0', 'false', 'no', 'off'] as const;
/** OpenTelemetry's environment carrier name for the parent span's W3C `traceparent`. */
export const ENV_TRACEPARENT = 'TRACEPARENT' as const;
