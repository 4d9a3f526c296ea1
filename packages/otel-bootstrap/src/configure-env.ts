// The orchestrator's half of the contract: before spawning servers it writes the effective
// settings into the environment they inherit (one setup, one run id for the fleet). What the
// user set wins and is never overwritten; a disabled run writes nothing.

import { describeError, describeValue, GYM_VARIABLES, readVariable } from '@gym/core/internal';
import { CONFIG_DEFAULTS, isSwitchedOff, loadTelemetryConfig, resolveRunId } from './config.js';
import { OTEL_VARIABLES } from './otel-variables.js';
import type { ConfigureTelemetryEnvOptions, TelemetryConfig } from './types.js';
import { reportWarning } from './warnings.js';

/** The variables the orchestrator hands down: Gym's own (@gym/core's table), plus `OTEL_SERVICE_NAME`. */
const WRITTEN = { ...GYM_VARIABLES, serviceName: OTEL_VARIABLES.serviceName } as const;
type WrittenKey = keyof typeof WRITTEN;

/** The canonical string of a config value in the environment (booleans as `1`/`0`). */
function envString(value: boolean | number | string): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}

/** The config block as environment strings, or a message naming the first value its variable's grammar refuses. */
function configStrings(config: Partial<TelemetryConfig>): Partial<Record<WrittenKey, string>> | string {
  const strings: Partial<Record<WrittenKey, string>> = {};
  for (const key of Object.keys(WRITTEN) as WrittenKey[]) {
    const value: unknown = config[key];
    if (value === undefined || value === null) continue;
    const expected = key === 'runId' ? 'string' : typeof CONFIG_DEFAULTS[key];
    const text = typeof value === expected ? envString(value as boolean | number | string) : undefined;
    if (text === undefined || WRITTEN[key].parse(text.trim()) === undefined) {
      return `config.${key} is not valid (allowed: ${WRITTEN[key].allowed}); got ${describeValue(value)}`;
    }
    strings[key] = text;
  }
  return strings;
}

/**
 * Orchestrator side, before spawning servers: writes the effective settings (the environment,
 * else `config`, else the defaults) into `env` under their `NEMO_GYM_OTEL_*` names and
 * `OTEL_SERVICE_NAME`, never overwriting a non-blank variable, with one run id for the fleet.
 * Returns the run id, or `null` when telemetry is disabled (then nothing is written; a
 * malformed value says so in one warning). Never throws.
 */
export function configureTelemetryEnv(
  config?: Partial<TelemetryConfig> | null,
  env: NodeJS.ProcessEnv = process.env,
  options?: ConfigureTelemetryEnvOptions,
): string | null {
  const onWarning = options?.onWarning;
  try {
    const strings = configStrings(config ?? {});
    if (typeof strings === 'string') {
      reportWarning(onWarning, `telemetry is disabled for the fleet: ${strings}`);
      return null;
    }
    // What the children will see: the user's environment first, then the config block.
    const view: NodeJS.ProcessEnv = { ...env };
    for (const key of Object.keys(strings) as WrittenKey[]) {
      const variable = WRITTEN[key];
      if (readVariable(env, variable.names) === undefined) view[variable.names[0]] = strings[key];
    }
    if (isSwitchedOff(view)) return null;
    const result = loadTelemetryConfig(view);
    if (!result.ok) {
      reportWarning(onWarning, `telemetry is disabled for the fleet: ${result.error}`);
      return null;
    }
    const effective = result.config;
    const runId = resolveRunId(effective.runId, view);
    for (const key of Object.keys(WRITTEN) as WrittenKey[]) {
      const name = WRITTEN[key].names[0];
      if (readVariable(env, [name]) !== undefined) continue;
      env[name] = envString(key === 'runId' ? runId : effective[key]);
    }
    return runId;
  } catch (error) {
    reportWarning(
      onWarning,
      `telemetry is disabled for the fleet: configureTelemetryEnv failed (${describeError(error)})`,
    );
    return null;
  }
}
