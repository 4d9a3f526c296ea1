// Names of the environment variables shared by the fleet. Names only: the one grammar that
// reads them lives in @gym/core.

export const ENV_PREFIX = 'NEMO_GYM_OTEL_' as const;
/** Read when the `NEMO_GYM_OTEL_` variable is unset or blank (the older NeMo Lens name). */
export const ENV_FALLBACK_PREFIX = 'NEMO_LENS_' as const;
export const ENV_SPAN_GROUPS = 'NEMO_GYM_OTEL_SPAN_GROUPS' as const;
export const ENV_SPAN_GROUPS_FALLBACK = 'NEMO_LENS_SPAN_GROUPS' as const;
/** Trimmed, any case: exactly Gym's. */
export const TRUTHY_WORDS = ['1', 'true', 'yes', 'on'] as const;
export const FALSY_WORDS = ['0', 'false', 'no', 'off'] as const;
