// The environment, parsed into one TelemetryConfig: Gym's variables by @gym/core's grammar, the
// standard OTEL_* ones by otel-variables.ts. A variable is read only while what it configures is
// in use; a malformed one refuses the whole config; what is read but not understood is said.

import { ENV_PREFIX } from '@gym/constants';
import { GYM_VARIABLES, type GymVariable, readGymVariable, readVariable } from '@gym/core/internal';
import {
  MAX_TIMER_MILLIS,
  OTEL_SWITCHES,
  OTEL_VARIABLES,
  OTLP_VARIABLES,
  type OtelVariable,
} from './otel-variables.js';
import type { TelemetryConfig, TelemetryConfigResult } from './types.js';

/** The config fields that come from one variable each (the OTLP URLs are derived). */
type FieldKey = Exclude<keyof TelemetryConfig, 'otlpTracesEndpoint' | 'otlpMetricsEndpoint'>;
type Fields = Pick<TelemetryConfig, FieldKey>;
type GymKey = keyof typeof GYM_VARIABLES;
type OtlpKey = keyof typeof OTLP_VARIABLES;

/** Each variable's default, used when it is unset or blank. */
export const CONFIG_DEFAULTS: Fields = Object.freeze(
  Object.fromEntries(
    [...Object.entries(GYM_VARIABLES), ...Object.entries(OTEL_VARIABLES)].map(([key, row]) => [key, row.defaultValue]),
  ) as unknown as Fields,
);

/** Whether the master switch says off (a malformed value is not off: the full parse names it). */
export function isSwitchedOff(env: NodeJS.ProcessEnv): boolean {
  const read = readGymVariable(env, GYM_VARIABLES.enabled);
  return read.ok && !read.value;
}

const KNOWN_NAMES: readonly string[] = Object.values(GYM_VARIABLES).map((variable) => variable.names[0]);
const MAX_NAMES_SHOWN = 10;
const MAX_NAME_SHOWN = 64;

/** `text` from the environment, printable and short, for a message. */
export function shown(text: string, max: number): string {
  const printable = text.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > max ? `${printable.slice(0, max - 1)}…` : printable;
}

/** The Levenshtein distance of `a` and `b`. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/** One warning listing the set `NEMO_GYM_OTEL_*` names (any case) that no package reads, each with the closest known one. */
export function unknownVariablesWarning(env: NodeJS.ProcessEnv): string | undefined {
  const unknown = Object.keys(env)
    .filter((name) => name.toUpperCase().startsWith(ENV_PREFIX) && !KNOWN_NAMES.includes(name))
    .filter((name) => env[name] !== undefined && env[name].trim() !== '')
    .sort();
  if (unknown.length === 0) return undefined;
  const listed = unknown.slice(0, MAX_NAMES_SHOWN).map((name) => {
    const upper = name.toUpperCase();
    let closest = KNOWN_NAMES[0]!;
    for (const known of KNOWN_NAMES) if (distance(upper, known) < distance(upper, closest)) closest = known;
    return `${shown(name, MAX_NAME_SHOWN)} (closest known: ${closest})`;
  });
  const more = unknown.length > MAX_NAMES_SHOWN ? ` and ${unknown.length - MAX_NAMES_SHOWN} more` : '';
  return `unknown ${ENV_PREFIX}* variables ignored: ${listed.join(', ')}${more}`;
}

/**
 * Parses the telemetry settings from `env`. Never throws: a malformed value gives `{ ok: false,
 * error }`, one message naming every bad variable. Either way `warnings` says what was read but
 * not used (unknown names, an `OTEL_SDK_DISABLED` other than `true`/`false`, a capped interval).
 */
export function loadTelemetryConfig(env: NodeJS.ProcessEnv = process.env): TelemetryConfigResult {
  const problems = new Set<string>();
  const warnings: string[] = [];
  const unknown = unknownVariablesWarning(env);
  if (unknown !== undefined) warnings.push(unknown);
  const fields: { -readonly [K in FieldKey]: Fields[K] } = { ...CONFIG_DEFAULTS };
  const malformed = new Set<FieldKey>();
  /** The value (its default when unset or blank), set on `fields[key]` when a key is given; a problem when malformed. */
  const read = <T>(variable: OtelVariable<T> | GymVariable<T>, key?: FieldKey): T | undefined => {
    const result = readGymVariable(env, variable);
    if (result.ok && key !== undefined) (fields as Record<FieldKey, unknown>)[key] = result.value;
    if (result.ok) return result.value;
    if (key !== undefined) malformed.add(key);
    problems.add(result.message);
    return undefined;
  };
  for (const key of Object.keys(GYM_VARIABLES) as GymKey[]) read<unknown>(GYM_VARIABLES[key], key);
  read(OTEL_VARIABLES.serviceName, 'serviceName');

  // The standard off-switches win over Gym's, as the specification says. A value other than
  // theirs leaves the switch alone and never makes the config malformed.
  const on = (variable: OtelVariable<boolean>): boolean => {
    const from = readVariable(env, variable.names);
    return from !== undefined && variable.parse(from.value.trim()) === true;
  };
  if (on(OTEL_SWITCHES.sdkDisabled)) fields.enabled = false;
  const sdkDisabled = readVariable(env, OTEL_SWITCHES.sdkDisabled.names);
  if (sdkDisabled !== undefined && !/^(?:true|false)$/i.test(sdkDisabled.value.trim())) {
    warnings.push(
      `${sdkDisabled.name}=${JSON.stringify(shown(sdkDisabled.value, MAX_NAME_SHOWN))} leaves telemetry on: only ` +
        '`true` (any case) disables it, as the OpenTelemetry specification says',
    );
  }
  if (on(OTEL_SWITCHES.metricsExporter)) fields.metricsEnabled = false;
  if (on(OTEL_SWITCHES.tracesExporter)) fields.tracesEnabled = false;

  // What is in use depends on the exporter and the signal switches; when one of those is
  // malformed, the config is refused anyway and what depends on it is not read.
  const decided = !malformed.has('exporter') && !malformed.has('metricsEnabled') && !malformed.has('tracesEnabled');
  const { exporter, metricsEnabled, tracesEnabled } = fields;
  if (decided && metricsEnabled && exporter === 'prometheus') {
    read(OTEL_VARIABLES.prometheusHost, 'prometheusHost');
    read(OTEL_VARIABLES.prometheusPort, 'prometheusPort');
  }
  if (decided && metricsEnabled && (exporter === 'otlp' || exporter === 'console')) {
    read(OTEL_VARIABLES.metricExportIntervalMillis, 'metricExportIntervalMillis');
    read(OTEL_VARIABLES.metricExportTimeoutMillis, 'metricExportTimeoutMillis');
    if (fields.metricExportIntervalMillis > MAX_TIMER_MILLIS) {
      warnings.push(
        `OTEL_METRIC_EXPORT_INTERVAL=${fields.metricExportIntervalMillis} is longer than a Node timer can wait; ` +
          `${MAX_TIMER_MILLIS} ms (about 24.8 days) is used`,
      );
      fields.metricExportIntervalMillis = MAX_TIMER_MILLIS;
    }
  }
  /** One signal's URL, by the exporters' own rules; its protocol must be http/protobuf. */
  const otlpUrl = (endpoint: OtlpKey, protocol: OtlpKey, resourcePath: string): string | undefined => {
    read(OTLP_VARIABLES[readVariable(env, OTLP_VARIABLES[protocol].names) ? protocol : 'protocol']);
    if (readVariable(env, OTLP_VARIABLES[endpoint].names) !== undefined) return read(OTLP_VARIABLES[endpoint]);
    const generic = read(OTLP_VARIABLES.endpoint);
    if (generic === undefined) return undefined;
    // Appended to the path; the query and fragment stay where they are.
    const url = new URL(generic);
    url.pathname = `${url.pathname}${url.pathname.endsWith('/') ? '' : '/'}${resourcePath}`;
    return url.toString();
  };
  const otlp = decided && exporter === 'otlp';
  const otlpTracesEndpoint =
    otlp && tracesEnabled ? otlpUrl('tracesEndpoint', 'tracesProtocol', 'v1/traces') : undefined;
  const otlpMetricsEndpoint =
    otlp && metricsEnabled ? otlpUrl('metricsEndpoint', 'metricsProtocol', 'v1/metrics') : undefined;

  if (problems.size > 0) return { ok: false, error: [...problems].join('; '), warnings };
  const metricExportTimeoutMillis = Math.min(fields.metricExportTimeoutMillis, fields.metricExportIntervalMillis);
  const config = { ...fields, metricExportTimeoutMillis, otlpTracesEndpoint, otlpMetricsEndpoint };
  return { ok: true, warnings, config: Object.freeze(config) };
}

/** Slurm's job id: the natural run id of a batch job. */
export const ENV_SLURM_JOB_ID = 'SLURM_JOB_ID' as const;

/** The run id in force: the configured one, else a usable `SLURM_JOB_ID`, else 12 random hex characters. */
export function resolveRunId(configured: string | undefined, env: NodeJS.ProcessEnv): string {
  if (configured !== undefined) return configured;
  const slurm = env[ENV_SLURM_JOB_ID];
  const usable = slurm === undefined ? undefined : GYM_VARIABLES.runId.parse(slurm.trim());
  // Web Crypto's global (no import): node:crypto would cost every process its load time.
  return usable ?? Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(6))).toString('hex');
}
