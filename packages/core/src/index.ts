// The public calls of @gym/core: publish and read the telemetry state that every gym-telemetry
// package judges by. Everything else the sibling packages share lives behind
// `@gym/core/internal`, which is no public promise.
export type { TelemetryState, TelemetryStateInit } from './telemetry-state.js';
export {
  currentSpanGroups,
  getTelemetryState,
  isMetricsExporting,
  isTracesExporting,
  setTelemetryState,
} from './telemetry-state.js';
