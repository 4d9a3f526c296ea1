// The standard OpenTelemetry variables this package reads itself. Gym's own NEMO_GYM_OTEL_*
// variables are not here: their one grammar lives in @gym/core (GYM_VARIABLES), shared with
// every library. These are the bootstrap's alone, because only the bootstrap builds exporters.
//
// Each row is read only while the piece that uses it is in use (see config.ts): a variable of
// an exporter that is not in use is never a reason to turn telemetry off.

/** One standard variable: a single name, no fallback. */
export interface OtelVariable<T> {
  readonly names: readonly [string];
  /** Value when unset or blank. */
  readonly defaultValue: T;
  /** The default as the docs say it. */
  readonly defaultText: string;
  /** What is allowed, as error messages and docs say it. */
  readonly allowed: string;
  /** When the variable is read at all. */
  readonly readWhen: string;
}

function row<T>(
  name: string,
  defaultValue: T,
  defaultText: string,
  allowed: string,
  readWhen: string,
): OtelVariable<T> {
  return { names: [name], defaultValue, defaultText, allowed, readWhen };
}

const PERIODIC = 'metrics on, exporter `otlp` or `console`';

/** Standard variables that become config fields. */
export const OTEL_VARIABLES = {
  serviceName: row(
    'OTEL_SERVICE_NAME',
    'nemo-gym',
    '`nemo-gym`',
    '1 to 256 characters, no control characters',
    'always',
  ),
  prometheusHost: row(
    'OTEL_EXPORTER_PROMETHEUS_HOST',
    '127.0.0.1',
    '`127.0.0.1` (loopback only)',
    'a host name or IP address, no spaces or slashes',
    'metrics on, exporter `prometheus`',
  ),
  prometheusPort: row(
    'OTEL_EXPORTER_PROMETHEUS_PORT',
    9464,
    '`9464`',
    'a whole number from 0 to 65535 (0 binds an ephemeral port)',
    'metrics on, exporter `prometheus`',
  ),
  metricExportIntervalMillis: row(
    'OTEL_METRIC_EXPORT_INTERVAL',
    60000,
    '`60000`',
    'a whole number of milliseconds from 1 to 2147483647',
    PERIODIC,
  ),
  metricExportTimeoutMillis: row(
    'OTEL_METRIC_EXPORT_TIMEOUT',
    30000,
    '`30000` (capped at the interval)',
    'a whole number of milliseconds from 1 to 2147483647',
    PERIODIC,
  ),
} as const;

/** OTLP variables, checked per enabled signal when the exporter is `otlp`; the exporter reads the rest itself. */
export const OTLP_VARIABLES = {
  endpoint: row<string | undefined>(
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    undefined,
    '`http://localhost:4318` (the exporter default)',
    'an http or https URL; v1/traces and v1/metrics are appended',
    'exporter `otlp`',
  ),
  tracesEndpoint: row<string | undefined>(
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    undefined,
    'from `OTEL_EXPORTER_OTLP_ENDPOINT`',
    'an http or https URL, used as is',
    'traces on, exporter `otlp`',
  ),
  metricsEndpoint: row<string | undefined>(
    'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
    undefined,
    'from `OTEL_EXPORTER_OTLP_ENDPOINT`',
    'an http or https URL, used as is',
    'metrics on, exporter `otlp`',
  ),
  protocol: row(
    'OTEL_EXPORTER_OTLP_PROTOCOL',
    'http/protobuf',
    '`http/protobuf`',
    'http/protobuf (the only OTLP transport this package ships)',
    'exporter `otlp`',
  ),
  tracesProtocol: row(
    'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    'http/protobuf',
    'from `OTEL_EXPORTER_OTLP_PROTOCOL`',
    'http/protobuf',
    'traces on, exporter `otlp`',
  ),
  metricsProtocol: row(
    'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL',
    'http/protobuf',
    'from `OTEL_EXPORTER_OTLP_PROTOCOL`',
    'http/protobuf',
    'metrics on, exporter `otlp`',
  ),
} as const;
