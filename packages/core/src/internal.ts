// What the gym-telemetry packages share with each other: instrument creation, meter/tracer
// resolution, once-only reporting, the NEMO_GYM_OTEL_* grammar and process-wide slots.
// `@gym/core/internal` is no public promise: it changes with the packages that use it, in any
// release. Users call the root entry (`@gym/core`) only.
export type { GymVariable, TelemetryExporter } from './environment.js';
export {
  GYM_VARIABLES,
  MAX_TIMER_SECONDS,
  MIN_SAMPLE_INTERVAL_SECONDS,
  malformedMessage,
  readGymVariable,
  readVariable,
} from './environment.js';
export type { InstrumentScope, MeterSourceOptions, TracerSourceOptions } from './instruments.js';
export { createInstrument, meterProviderOf, perMeter, resolveMeter, resolveTracer } from './instruments.js';
export type { Reporter } from './report.js';
export { createReporter, describeError, describeValue, FAILURE_POLICY, invalidChoice } from './report.js';
export { sharedSlot } from './shared-slot.js';
