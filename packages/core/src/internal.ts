// What the gym-telemetry packages share with each other: no public promise, it changes in any release.
export type { GymVariable, TelemetryExporter } from './environment.js';
export {
  GYM_VARIABLES,
  MAX_TIMER_SECONDS,
  MIN_SAMPLE_INTERVAL_SECONDS,
  readGymVariable,
  readVariable,
} from './environment.js';
export type { InstrumentScope, MeterSourceOptions, TracerSourceOptions } from './instruments.js';
export { createInstrument, meterProviderOf, perMeter, resolveMeter, resolveTracer } from './instruments.js';
export type { Settled } from './observe.js';
export { observeSettled } from './observe.js';
export { createReporter, describeError, describeValue, FAILURE_POLICY, invalidChoice, sharedSlot } from './report.js';
