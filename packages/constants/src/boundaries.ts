// Histogram bucket boundaries, in milliseconds, exactly as Gym's Python servers use them:
// both kinds of server feed the same dashboards, so a different bucket would split a series.

export const OPERATION_BOUNDARIES_MS = [
  1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000, 300000, 1800000,
] as const;

export const GYM_DURATION_BOUNDARIES_MS = [
  100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1200000, 1800000, 3600000,
] as const;

export const SANDBOX_DURATION_BOUNDARIES_MS = [
  250, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000,
] as const;
