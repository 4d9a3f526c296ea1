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
  const disabled = (why: string): null => {
    reportWarning(options?.onWarning, `telemetry is disabled for the fleet: ${why}`);
    return null;
  };
  try {
    // What the children will see: the user's environment first, then the config block, by the same grammar.
    const view: NodeJS.ProcessEnv = { ...env };
    for (const key of Object.keys(WRITTEN) as WrittenKey[]) {
      const value: unknown = config?.[key];
      if (value === undefined || value === null) continue;
      const expected = key === 'runId' ? 'string' : typeof CONFIG_DEFAULTS[key];
      const text = typeof value === expected ? envString(value as boolean | number | string) : undefined;
      if (text === undefined || WRITTEN[key].parse(text.trim()) === undefined) {
        return disabled(`config.${key} is not valid (allowed: ${WRITTEN[key].allowed}); got ${describeValue(value)}`);
      }
      if (readVariable(env, WRITTEN[key].names) === undefined) view[WRITTEN[key].names[0]] = text;
    }
    if (isSwitchedOff(view)) return null;
    const result = loadTelemetryConfig(view);
    if (!result.ok) return disabled(result.error);
    const runId = resolveRunId(result.config.runId, view);
    for (const key of Object.keys(WRITTEN) as WrittenKey[]) {
      const name = WRITTEN[key].names[0];
      if (readVariable(env, [name]) === undefined) env[name] = envString(key === 'runId' ? runId : result.config[key]);
    }
    return runId;
  } catch (error) {
    return disabled(`configureTelemetryEnv failed (${describeError(error)})`);
  }
}
