// The five gym.* instruments of NeMo Gym's rollout/verify/fleet lens, for TypeScript
// servers: four written, one (`gym.server.request_duration_ms`) deliberately never.

export type { MetricsOptions } from './gym-metrics.js';
export { GymMetrics, recordActiveServers, recordRolloutDuration, recordVerify } from './gym-metrics.js';
export { declareOrchestrator, isOrchestrator } from './orchestrator.js';
export type { VerifySpanOptions } from './verify-span.js';
export { traceVerify } from './verify-span.js';
