// Histogram bucket boundaries, in milliseconds, exactly as Gym's Python servers use them:
// both kinds of server feed the same dashboards, so a different bucket would split a series.

export const OPERATION_BOUNDARIES_MS = [
  1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000, 300000, 1800000,
] as const;

// gym.rollout.duration_ms and gym.verify.duration_ms: Gym 0.7.0 creates both without bucket
// advice (nemo-lens's record_gym_metrics), so its servers export the OpenTelemetry SDK's default
// boundaries, which end at 10 s; these are that list (the parity test compares them).
export const GYM_DURATION_BOUNDARIES_MS = [
  0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000,
] as const;

export const SANDBOX_DURATION_BOUNDARIES_MS = [
  250, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000,
] as const;
