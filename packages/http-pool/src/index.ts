export type {
  DispatchFunction,
  HttpPoolTelemetry,
  HttpPoolTelemetryOptions,
  ObservableClient,
  ObservablePool,
  PoolLimit,
} from './http-pool.js';
export { startHttpPoolTelemetry } from './http-pool.js';
