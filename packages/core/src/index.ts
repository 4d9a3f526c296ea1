export { createInstrument, type InstrumentOfKind } from './create-instrument.js';
export { DESCRIBE_MAX_CHARS, describeError, describeValue, invalidChoice } from './describe-value.js';
export type { GymVariable, GymVariableName, RawValue, ReadResult, TelemetryExporter } from './environment.js';
export {
  GYM_VARIABLES,
  isTruthy,
  MAX_TIMER_SECONDS,
  MIN_SAMPLE_INTERVAL_SECONDS,
  malformedMessage,
  parseBooleanWord,
  parseDecimal,
  parseWhole,
  readGymVariable,
  readVariable,
  TELEMETRY_EXPORTERS,
} from './environment.js';
export { FAILURE_POLICY } from './failure-policy.js';
export type { InstrumentScope, MeterSourceOptions, TracerSourceOptions } from './instrument-source.js';
export { resolveMeter, resolveTracer, wouldRecordMetrics, wouldRecordTraces } from './instrument-source.js';
export { perMeter } from './per-meter.js';
export type { Reporter } from './report.js';
export { createReporter } from './report.js';
export { SHARED_SLOT_VERSION, sharedSlot } from './shared-slot.js';
export type { TelemetryState, TelemetryStateInit } from './telemetry-state.js';
export {
  currentSpanGroups,
  getTelemetryState,
  isMetricsExporting,
  isTracesExporting,
  setTelemetryState,
  TELEMETRY_STATE_VERSION,
} from './telemetry-state.js';
