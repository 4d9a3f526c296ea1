// @gym/otel-bootstrap: one process's OpenTelemetry, from the environment. The only package of
// gym-telemetry that imports the SDK, and only once telemetry is on.

export type { TelemetryExporter } from '@gym/core/internal';

export { CONFIG_DEFAULTS, ENV_SLURM_JOB_ID, loadTelemetryConfig } from './config.js';
export { configureTelemetryEnv } from './configure-env.js';
export { getTelemetry, initTelemetry, isSpanGroupEnabled, shutdownTelemetry } from './telemetry.js';
export {
  type ConfigureTelemetryEnvOptions,
  type InitTelemetryOptions,
  type PrometheusEndpointLimits,
  SCOPE_NAME,
  type TelemetryConfig,
  type TelemetryConfigResult,
  type TelemetryHandle,
  type TelemetryWarningHandler,
} from './types.js';
export { WARNING_CODE } from './warnings.js';
