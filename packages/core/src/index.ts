// The public calls of @gym/core: publish and read the telemetry state every gym-telemetry package
// judges by. What the packages share besides is in `@gym/core/internal`, no public promise.
export type { TelemetryState, TelemetryStateInit } from './telemetry-state.js';
export {
  currentSpanGroups,
  getTelemetryState,
  isMetricsExporting,
  isTracesExporting,
  setTelemetryState,
} from './telemetry-state.js';
