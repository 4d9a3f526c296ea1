// The environment, parsed with zod into one TelemetryConfig. Gym's own variables follow the
// one grammar of @gym/core (GYM_VARIABLES, read with readGymVariable): a value means the same
// here as in every library and in Gym's Python servers. The standard OTEL_* variables are the
// bootstrap's alone (otel-variables.ts). A malformed value is not guessed at: the whole config
// is refused with one message naming every bad variable, its value and what is allowed, and
// the caller turns telemetry off (the server keeps running).
//
// A variable is read only while what it configures is in use: the Prometheus host and port
// with the `prometheus` exporter, the OTLP variables with `otlp` (per enabled signal), the
// export interval and timeout with a periodic reader. A typo in the settings of an exporter
// nobody uses never turns telemetry off.
//
// zod is loaded on the first parse, through `require`, not at module load: a process with
// telemetry off decides that from NEMO_GYM_OTEL_ENABLED alone (`readEnabledSwitch`) and
// never pays for zod (tens of milliseconds of startup).

import { createRequire } from 'node:module';
import {
  describeError,
  GYM_VARIABLES,
  type GymVariable,
  malformedMessage,
  readGymVariable,
  readVariable,
} from '@gym/core';
import type { ZodType } from 'zod';
import { OTEL_VARIABLES, OTLP_VARIABLES, type OtelVariable } from './otel-variables.js';
import type { TelemetryConfig, TelemetryConfigResult } from './types.js';

type Zod = typeof import('zod');

/** An environment to read: own string properties only (see {@link ownEnvironment}). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The config fields that come from one variable each (the OTLP URLs are derived). */
export type FieldKey = Exclude<keyof TelemetryConfig, 'otlpTracesEndpoint' | 'otlpMetricsEndpoint'>;
type Fields = Pick<TelemetryConfig, FieldKey>;
type GymKey = keyof typeof GYM_VARIABLES;
type OtelKey = keyof typeof OTEL_VARIABLES;
type OtlpKey = keyof typeof OTLP_VARIABLES;

/** Defaults, used when every name of a variable is unset or blank. */
export const CONFIG_DEFAULTS: Fields = Object.freeze({
  enabled: GYM_VARIABLES.enabled.defaultValue,
  spanGroups: GYM_VARIABLES.spanGroups.defaultValue,
  tracesEnabled: GYM_VARIABLES.tracesEnabled.defaultValue,
  metricsEnabled: GYM_VARIABLES.metricsEnabled.defaultValue,
  logsEnabled: GYM_VARIABLES.logsEnabled.defaultValue,
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

/** The only OTLP transport shipped (`@opentelemetry/exporter-*-otlp-proto`). */
const OTLP_PROTOCOL = 'http/protobuf';

/** Names this package reads; everything else in the environment is left out of its view. */
const READ_NAMES = new Set<string>([
  ...Object.values(GYM_VARIABLES).flatMap((variable) => variable.names),
  ...Object.values(OTEL_VARIABLES).flatMap((variable) => variable.names),
  ...Object.values(OTLP_VARIABLES).flatMap((variable) => variable.names),
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

/** A zod schema that reads one field out of an environment. */
type FieldSchema<T> = ZodType<T, Environment>;

interface Schemas {
  readonly gym: { readonly [K in GymKey]: FieldSchema<Fields[K]> };
  readonly otel: { readonly [K in OtelKey]: FieldSchema<Fields[K]> };
  readonly otlp: { readonly [K in OtlpKey]: FieldSchema<string | undefined> };
}

let schemas: Schemas | undefined;

function getSchemas(): Schemas {
  if (schemas === undefined) {
    const require = createRequire(import.meta.url);
    schemas = buildSchemas(require('zod') as Zod);
  }
  return schemas;
}

function buildSchemas({ z }: Zod): Schemas {
  const environment = z.custom<Environment>((value) => typeof value === 'object' && value !== null);

  /** A Gym variable: read and parsed by @gym/core's grammar, refused with its message. */
  const gym = <T>(variable: GymVariable<T>): FieldSchema<T> =>
    environment.transform((env, ctx) => {
      const read = readGymVariable(env, variable);
      if (read.ok) return read.value;
      ctx.addIssue({ code: 'custom', message: read.message });
      return z.NEVER;
    });

  /** A standard variable: the default when unset or blank, else `value` must accept it. */
  const standard = <T>(variable: OtelVariable<T>, value: ZodType<NonNullable<T>, string>): FieldSchema<T> =>
    environment.transform((env, ctx) => {
      const from = readVariable(env, variable.names);
      if (from === undefined) return variable.defaultValue;
      const parsed = value.safeParse(from.value);
      if (parsed.success) return parsed.data;
      ctx.addIssue({ code: 'custom', message: malformedMessage(from, variable.allowed) });
      return z.NEVER;
    });

  const wholeMillis = z
    .string()
    .trim()
    .regex(/^\d{1,10}$/)
    .transform(Number)
    .pipe(z.number().int().min(1).max(2_147_483_647));
  const url = z
    .string()
    .trim()
    .pipe(z.url({ protocol: /^https?$/ }));
  const protocol = z.string().trim().toLowerCase().pipe(z.literal(OTLP_PROTOCOL));

  return {
    gym: {
      enabled: gym(GYM_VARIABLES.enabled),
      spanGroups: gym(GYM_VARIABLES.spanGroups),
      tracesEnabled: gym(GYM_VARIABLES.tracesEnabled),
      metricsEnabled: gym(GYM_VARIABLES.metricsEnabled),
      logsEnabled: gym(GYM_VARIABLES.logsEnabled),
      exporter: gym(GYM_VARIABLES.exporter),
      runId: gym(GYM_VARIABLES.runId),
      serviceNamePerServer: gym(GYM_VARIABLES.serviceNamePerServer),
      sandboxResourceSampleIntervalSeconds: gym(GYM_VARIABLES.sandboxResourceSampleIntervalSeconds),
      observer: gym(GYM_VARIABLES.observer),
      shutdownTimeoutMillis: gym(GYM_VARIABLES.shutdownTimeoutMillis),
    },
    otel: {
      serviceName: standard(
        OTEL_VARIABLES.serviceName,
        z
          .string()
          .trim()
          .regex(/^[^\p{Cc}]{1,256}$/u),
      ),
      prometheusHost: standard(
        OTEL_VARIABLES.prometheusHost,
        z
          .string()
          .trim()
          .regex(/^[^\s/]{1,253}$/),
      ),
      prometheusPort: standard(
        OTEL_VARIABLES.prometheusPort,
        z
          .string()
          .trim()
          .regex(/^\d{1,5}$/)
          .transform(Number)
          .pipe(z.number().int().min(0).max(65535)),
      ),
      metricExportIntervalMillis: standard(OTEL_VARIABLES.metricExportIntervalMillis, wholeMillis),
      metricExportTimeoutMillis: standard(OTEL_VARIABLES.metricExportTimeoutMillis, wholeMillis),
    },
    otlp: {
      endpoint: standard(OTLP_VARIABLES.endpoint, url),
      tracesEndpoint: standard(OTLP_VARIABLES.tracesEndpoint, url),
      metricsEndpoint: standard(OTLP_VARIABLES.metricsEndpoint, url),
      protocol: standard(OTLP_VARIABLES.protocol, protocol),
      tracesProtocol: standard(OTLP_VARIABLES.tracesProtocol, protocol),
      metricsProtocol: standard(OTLP_VARIABLES.metricsProtocol, protocol),
    },
  };
}

/** How NEMO_GYM_OTEL_ENABLED (then NEMO_LENS_ENABLED) reads, without loading zod. */
export type EnabledSwitch = 'on' | 'off' | 'malformed';

/**
 * Reads only the master switch: `off` when unset, blank or a falsy word; `on` for a truthy
 * word; `malformed` otherwise (the full parse then names it). No zod: this is the whole cost
 * of a disabled process. Own properties only; never throws (an unreadable switch is off).
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

function parseConfig(env: Environment): TelemetryConfigResult {
  const { gym, otel, otlp } = getSchemas();
  const problems = new Set<string>();
  /** The value, or `undefined` (and a problem) when malformed. */
  const read = <T>(schema: FieldSchema<T>): T | undefined => {
    const parsed = schema.safeParse(env);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) problems.add(issue.message);
    return undefined;
  };
  const fields: { -readonly [K in FieldKey]: Fields[K] } = { ...CONFIG_DEFAULTS };
  const malformed = new Set<FieldKey>();
  const take = <K extends FieldKey>(key: K, schema: FieldSchema<Fields[K]>): void => {
    const parsed = schema.safeParse(env);
    if (parsed.success) {
      fields[key] = parsed.data;
      return;
    }
    malformed.add(key);
    for (const issue of parsed.error.issues) problems.add(issue.message);
  };
  for (const key of Object.keys(gym) as GymKey[]) take(key, gym[key] as FieldSchema<Fields[typeof key]>);
  take('serviceName', otel.serviceName);

  // What is in use depends on the exporter and the signal switches; when one of those is
  // itself malformed, the config is refused anyway and what depends on it is not read.
  const decided = !malformed.has('exporter') && !malformed.has('metricsEnabled') && !malformed.has('tracesEnabled');
  const { exporter, metricsEnabled, tracesEnabled } = fields;
  let otlpTracesEndpoint: string | undefined;
  let otlpMetricsEndpoint: string | undefined;
  if (decided && metricsEnabled && exporter === 'prometheus') {
    take('prometheusHost', otel.prometheusHost);
    take('prometheusPort', otel.prometheusPort);
  }
  if (decided && metricsEnabled && (exporter === 'otlp' || exporter === 'console')) {
    take('metricExportIntervalMillis', otel.metricExportIntervalMillis);
    take('metricExportTimeoutMillis', otel.metricExportTimeoutMillis);
  }
  if (decided && exporter === 'otlp') {
    /** One signal's URL, with the exporters' own rules; its protocol must be http/protobuf. */
    const signal = (endpoint: OtlpKey, protocol: OtlpKey, resourcePath: string): string | undefined => {
      const signalProtocol = readVariable(env, OTLP_VARIABLES[protocol].names) !== undefined;
      read(otlp[signalProtocol ? protocol : 'protocol']);
      if (readVariable(env, OTLP_VARIABLES[endpoint].names) !== undefined) {
        const specific = read(otlp[endpoint]);
        return specific === undefined ? undefined : new URL(specific).toString();
      }
      const generic = read(otlp.endpoint);
      if (generic === undefined) return undefined;
      return `${generic}${generic.endsWith('/') ? '' : '/'}${resourcePath}`;
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
 * grammar (core's for Gym fields, zod's for `serviceName`) the environment goes through.
 * Used to check config objects before they are written into the environment.
 */
export function isValidFieldString(key: GymKey | 'serviceName', value: string): boolean {
  if (key === 'serviceName') {
    return getSchemas().otel.serviceName.safeParse({ [OTEL_VARIABLES.serviceName.names[0]]: value }).success;
  }
  return (GYM_VARIABLES[key] as GymVariable<unknown>).parse(value) !== undefined;
}

/** The canonical string of a config value in the environment (booleans as `1`/`0`). */
export function envString(value: boolean | number | string): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}
