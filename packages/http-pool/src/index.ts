export type {
  DispatchFunction,
  HttpPoolTelemetry,
  HttpPoolTelemetryOptions,
  ObservablePool,
} from './http-pool.js';
export { startHttpPoolTelemetry } from './http-pool.js';
