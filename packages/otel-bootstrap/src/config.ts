// The environment, parsed into one TelemetryConfig by plain functions. Gym's own variables
// follow the one grammar of @gym/core (GYM_VARIABLES, read with readGymVariable): a value
// means the same here as in every library and in Gym's Python servers. The standard OTEL_*
// variables are the bootstrap's alone (otel-variables.ts, each with its parser). A malformed
// value is not guessed at: the whole config is refused with one message naming every bad
// variable, its value and what is allowed, and the caller turns telemetry off (the server
// keeps running).
//
// A variable is read only while what it configures is in use: the Prometheus host and port
// with the `prometheus` exporter, the OTLP variables with `otlp` (per enabled signal), the
// export interval and timeout with a periodic reader. A typo in the settings of an exporter
// nobody uses never turns telemetry off.
//
// The standard off-switches win over Gym's switches (the OpenTelemetry specification):
// `OTEL_SDK_DISABLED=true` turns telemetry off whatever `NEMO_GYM_OTEL_ENABLED` says, and
// `OTEL_{METRICS,TRACES}_EXPORTER=none` turns that signal off whatever
// `NEMO_GYM_OTEL_{METRICS,TRACES}_ENABLED` and `NEMO_GYM_OTEL_EXPORTER` say.

import {
  describeError,
  GYM_VARIABLES,
  type GymVariable,
  malformedMessage,
  readGymVariable,
  readVariable,
} from '@gym/core/internal';
import { OTEL_SWITCHES, OTEL_VARIABLES, OTLP_VARIABLES, type OtelVariable } from './otel-variables.js';
import type { TelemetryConfig, TelemetryConfigResult } from './types.js';

/** An environment to read: own string properties only (see {@link ownEnvironment}). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The config fields that come from one variable each (the OTLP URLs are derived). */
export type FieldKey = Exclude<keyof TelemetryConfig, 'otlpTracesEndpoint' | 'otlpMetricsEndpoint'>;
type Fields = Pick<TelemetryConfig, FieldKey>;
type GymKey = keyof typeof GYM_VARIABLES;
type OtlpKey = keyof typeof OTLP_VARIABLES;

/** Defaults, used when every name of a variable is unset or blank. */
export const CONFIG_DEFAULTS: Fields = Object.freeze({
  enabled: GYM_VARIABLES.enabled.defaultValue,
  spanGroups: GYM_VARIABLES.spanGroups.defaultValue,
  tracesEnabled: GYM_VARIABLES.tracesEnabled.defaultValue,
  metricsEnabled: GYM_VARIABLES.metricsEnabled.defaultValue,
  exporter: GYM_VARIABLES.exporter.defaultValue,
  runId: GYM_VARIABLES.runId.defaultValue,
  serviceNamePerServer: GYM_VARIABLES.serviceNamePerServer.defaultValue,
  sandboxResourceSampleIntervalSeconds: GYM_VARIABLES.sandboxResourceSampleIntervalSeconds.defaultValue,
  observer: GYM_VARIABLES.observer.defaultValue,
  shutdownTimeoutMillis: GYM_VARIABLES.shutdownTimeoutMillis.defaultValue,
  serviceName: OTEL_VARIABLES.serviceName.defaultValue,
  prometheusHost: OTEL_VARIABLES.prometheusHost.defaultValue,
  prometheusPort: OTEL_VARIABLES.prometheusPort.defaultValue,
  metricExportIntervalMillis: OTEL_VARIABLES.metricExportIntervalMillis.defaultValue,
  metricExportTimeoutMillis: OTEL_VARIABLES.metricExportTimeoutMillis.defaultValue,
});

/** Names this package reads; everything else in the environment is left out of its view. */
const READ_NAMES = new Set<string>([
  ...Object.values(GYM_VARIABLES).flatMap((variable) => variable.names),
  ...Object.values(OTEL_VARIABLES).flatMap((variable) => variable.names),
  ...Object.values(OTLP_VARIABLES).flatMap((variable) => variable.names),
  ...Object.values(OTEL_SWITCHES).flatMap((variable) => variable.names),
  'SLURM_JOB_ID',
]);

/**
 * The variables this package reads, copied from `env`'s OWN string properties into an object
 * without a prototype: a polluted `Object.prototype` can neither switch telemetry on nor
 * invent a value. A getter that throws is read as unset.
 */
export function ownEnvironment(env: NodeJS.ProcessEnv): Environment {
  const own: Record<string, string | undefined> = Object.create(null);
  for (const name of READ_NAMES) {
    try {
      if (!Object.hasOwn(env, name)) continue;
      const value = env[name];
      if (typeof value === 'string') own[name] = value;
    } catch {
      // Unreadable is unset.
    }
  }
  return own;
}

/** A standard variable: `{ value }` (its default when unset or blank), or `{ problem }`. */
function readStandard<T>(env: Environment, variable: OtelVariable<T>): { value: T } | { problem: string } {
  const from = readVariable(env, variable.names);
  if (from === undefined) return { value: variable.defaultValue };
  const value = variable.parse(from.value.trim());
  return value === undefined ? { problem: malformedMessage(from, variable.allowed) } : { value };
}

/** How NEMO_GYM_OTEL_ENABLED (then NEMO_LENS_ENABLED) reads, without parsing anything else. */
export type EnabledSwitch = 'on' | 'off' | 'malformed';

/**
 * Reads only the master switch: `off` when unset, blank or a falsy word; `on` for a truthy
 * word; `malformed` otherwise (the full parse then names it). This is the whole cost of a
 * disabled process. Own properties only; never throws (an unreadable switch is off).
 */
export function readEnabledSwitch(env: NodeJS.ProcessEnv): EnabledSwitch {
  const own: Record<string, string | undefined> = Object.create(null);
  for (const name of GYM_VARIABLES.enabled.names) {
    try {
      if (Object.hasOwn(env, name)) own[name] = env[name];
    } catch {
      // Unreadable is unset.
    }
  }
  const read = readGymVariable(own, GYM_VARIABLES.enabled);
  if (!read.ok) return 'malformed';
  return read.value ? 'on' : 'off';
}

/**
 * Parses the telemetry settings from `env` (default `process.env`): Gym's variables
 * (`NEMO_GYM_OTEL_<KEY>`, falling back to `NEMO_LENS_<KEY>` when the first is unset or blank)
 * by @gym/core's grammar; `OTEL_SERVICE_NAME`; and, only while what they configure is in use,
 * `OTEL_EXPORTER_PROMETHEUS_HOST|PORT` (exporter `prometheus`), `OTEL_METRIC_EXPORT_INTERVAL|TIMEOUT`
 * (exporter `otlp` or `console`) and the OTLP endpoint and protocol variables (exporter `otlp`,
 * per enabled signal). Others keep their defaults. Only own properties of `env` are read.
 * Never throws: a malformed value gives `{ ok: false, error }` with one message naming every
 * bad variable.
 */
export function loadTelemetryConfig(env: NodeJS.ProcessEnv = process.env): TelemetryConfigResult {
  try {
    return parseConfig(ownEnvironment(env));
  } catch (error) {
    return { ok: false, error: `the telemetry settings could not be read (${describeError(error)})` };
  }
}

/** `base` with `resourcePath` appended to its path (the query and fragment stay where they are). */
export function appendPath(base: string, resourcePath: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname}${url.pathname.endsWith('/') ? '' : '/'}${resourcePath}`;
  return url.toString();
}

function parseConfig(env: Environment): TelemetryConfigResult {
  const problems = new Set<string>();
  /** The value, or `undefined` (and a problem) when malformed. */
  const standard = <T>(variable: OtelVariable<T>): T | undefined => {
    const read = readStandard(env, variable);
    if ('value' in read) return read.value;
    problems.add(read.problem);
    return undefined;
  };
  const fields: { -readonly [K in FieldKey]: Fields[K] } = { ...CONFIG_DEFAULTS };
  const malformed = new Set<FieldKey>();
  /** Sets a standard field when well formed (a malformed one is already in `problems`). */
  const take = <K extends FieldKey>(key: K, value: Fields[K] | undefined): void => {
    if (value !== undefined) fields[key] = value;
  };
  for (const key of Object.keys(GYM_VARIABLES) as GymKey[]) {
    const read = readGymVariable(env, GYM_VARIABLES[key] as GymVariable<Fields[typeof key]>);
    if (read.ok) (fields as Record<GymKey, unknown>)[key] = read.value;
    else {
      malformed.add(key);
      problems.add(read.message);
    }
  }
  take('serviceName', standard(OTEL_VARIABLES.serviceName));

  // The standard off-switches: the specification's word wins over Gym's switches.
  // They never make a config malformed: a value other than theirs leaves the switch alone.
  const on = (variable: OtelVariable<boolean>): boolean => {
    const from = readVariable(env, variable.names);
    return from !== undefined && variable.parse(from.value.trim()) === true;
  };
  if (on(OTEL_SWITCHES.sdkDisabled)) fields.enabled = false;
  if (on(OTEL_SWITCHES.metricsExporter)) fields.metricsEnabled = false;
  if (on(OTEL_SWITCHES.tracesExporter)) fields.tracesEnabled = false;

  // What is in use depends on the exporter and the signal switches; when one of those is
  // itself malformed, the config is refused anyway and what depends on it is not read.
  const decided = !malformed.has('exporter') && !malformed.has('metricsEnabled') && !malformed.has('tracesEnabled');
  const { exporter, metricsEnabled, tracesEnabled } = fields;
  let otlpTracesEndpoint: string | undefined;
  let otlpMetricsEndpoint: string | undefined;
  if (decided && metricsEnabled && exporter === 'prometheus') {
    take('prometheusHost', standard(OTEL_VARIABLES.prometheusHost));
    take('prometheusPort', standard(OTEL_VARIABLES.prometheusPort));
  }
  if (decided && metricsEnabled && (exporter === 'otlp' || exporter === 'console')) {
    take('metricExportIntervalMillis', standard(OTEL_VARIABLES.metricExportIntervalMillis));
    take('metricExportTimeoutMillis', standard(OTEL_VARIABLES.metricExportTimeoutMillis));
  }
  if (decided && exporter === 'otlp') {
    /** One signal's URL, with the exporters' own rules; its protocol must be http/protobuf. */
    const signal = (endpoint: OtlpKey, protocol: OtlpKey, resourcePath: string): string | undefined => {
      const signalProtocol = readVariable(env, OTLP_VARIABLES[protocol].names) !== undefined;
      standard(OTLP_VARIABLES[signalProtocol ? protocol : 'protocol']);
      if (readVariable(env, OTLP_VARIABLES[endpoint].names) !== undefined) return standard(OTLP_VARIABLES[endpoint]);
      const generic = standard(OTLP_VARIABLES.endpoint);
      return generic === undefined ? undefined : appendPath(generic, resourcePath);
    };
    if (tracesEnabled) otlpTracesEndpoint = signal('tracesEndpoint', 'tracesProtocol', 'v1/traces');
    if (metricsEnabled) otlpMetricsEndpoint = signal('metricsEndpoint', 'metricsProtocol', 'v1/metrics');
  }

  if (problems.size > 0) return { ok: false, error: [...problems].join('; ') };
  return {
    ok: true,
    config: Object.freeze({
      ...fields,
      metricExportTimeoutMillis: Math.min(fields.metricExportTimeoutMillis, fields.metricExportIntervalMillis),
      otlpTracesEndpoint,
      otlpMetricsEndpoint,
    }),
  };
}

/**
 * Whether `value` is an acceptable environment string for config field `key`: the same
 * grammar (core's for Gym fields, the standard row's for `serviceName`) the environment goes through.
 * Used to check config objects before they are written into the environment.
 */
export function isValidFieldString(key: GymKey | 'serviceName', value: string): boolean {
  if (key === 'serviceName') return OTEL_VARIABLES.serviceName.parse(value.trim()) !== undefined;
  return (GYM_VARIABLES[key] as GymVariable<unknown>).parse(value) !== undefined;
}

/** The canonical string of a config value in the environment (booleans as `1`/`0`). */
export function envString(value: boolean | number | string): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}
