export type { MetricsOptions } from './gym-metrics.js';
export {
  declareOrchestrator,
  GymMetrics,
  isOrchestrator,
  recordActiveServers,
  recordRolloutDuration,
  recordVerify,
} from './gym-metrics.js';
export type { VerifySpanOptions } from './verify-span.js';
export { traceVerify } from './verify-span.js';
