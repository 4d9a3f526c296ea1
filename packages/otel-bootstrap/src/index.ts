// @gym/otel-bootstrap: one process's OpenTelemetry, from the environment. The only package
// of gym-telemetry that imports the SDK, and only once telemetry is on. The grammar of the
// NEMO_GYM_OTEL_* variables is @gym/core's; `TelemetryExporter` is re-exported because
// `TelemetryConfig` uses it.

export type { TelemetryExporter } from '@gym/core/internal';

export { CONFIG_DEFAULTS, ENV_SLURM_JOB_ID, loadTelemetryConfig } from './config.js';
export { configureTelemetryEnv } from './configure-env.js';
export { SCOPE_NAME } from './scope.js';
export { getTelemetry, initTelemetry, isSpanGroupEnabled, shutdownTelemetry } from './telemetry.js';
export type {
  ConfigureTelemetryEnvOptions,
  InitTelemetryOptions,
  PrometheusEndpointLimits,
  TelemetryConfig,
  TelemetryConfigResult,
  TelemetryHandle,
  TelemetryWarningHandler,
} from './types.js';
export { WARNING_CODE } from './warnings.js';
