// What the gym-telemetry packages share with each other: instrument creation, meter/tracer
// resolution, once-only reporting, the NEMO_GYM_OTEL_* grammar and process-wide slots.
// `@gym/core/internal` is no public promise: it changes with the packages that use it, in any
// release. Users call the root entry (`@gym/core`) only.
export { createInstrument } from './create-instrument.js';
export { describeError, describeValue, invalidChoice } from './describe-value.js';
export type { GymVariable, TelemetryExporter } from './environment.js';
export {
  GYM_VARIABLES,
  MAX_TIMER_SECONDS,
  MIN_SAMPLE_INTERVAL_SECONDS,
  malformedMessage,
  readGymVariable,
  readVariable,
} from './environment.js';
export { FAILURE_POLICY } from './failure-policy.js';
export type { InstrumentScope, MeterSourceOptions, TracerSourceOptions } from './instrument-source.js';
export { resolveMeter, resolveTracer } from './instrument-source.js';
export { perMeter } from './per-meter.js';
export type { Reporter } from './report.js';
export { createReporter } from './report.js';
export { sharedSlot } from './shared-slot.js';
