// The standard OpenTelemetry variables this package reads (Gym's own are @gym/core's GYM_VARIABLES).

import { MAX_TIMER_SECONDS } from '@gym/core/internal';

/** One standard variable (a single name, no fallback); the texts say it as docs and messages do. */
export interface OtelVariable<T> {
  readonly names: readonly [string];
  readonly defaultValue: T;
  readonly defaultText: string;
  readonly allowed: string;
  /** When the variable is read at all. */
  readonly readWhen: string;
  /** The value of a set, non-blank, trimmed text, or `undefined` when it is malformed. */
  readonly parse: (text: string) => NonNullable<T> | undefined;
}

function row<T>(
  name: string,
  defaultValue: T,
  defaultText: string,
  allowed: string,
  readWhen: string,
  parse: (text: string) => NonNullable<T> | undefined,
): OtelVariable<T> {
  return { names: [name], defaultValue, defaultText, allowed, readWhen, parse };
}

/** A whole number from `min` to `max`, digits only. */
function wholeNumber(min: number, max = Number.POSITIVE_INFINITY): (text: string) => number | undefined {
  return (text) => {
    const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    return value >= min && value <= max ? value : undefined;
  };
}

/** An absolute http or https URL, as the WHATWG parser normalises it. */
function httpUrl(text: string): string | undefined {
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : undefined;
}

const OTLP_PROTOCOL = 'http/protobuf';
const protocol = (text: string): string | undefined =>
  text.toLowerCase() === OTLP_PROTOCOL ? OTLP_PROTOCOL : undefined;

/** The longest a Node timer waits (2^31 − 1 ms). */
export const MAX_TIMER_MILLIS = MAX_TIMER_SECONDS * 1000;

const PERIODIC = 'metrics on, exporter `otlp` or `console`';

/** Standard variables that become config fields. */
export const OTEL_VARIABLES = {
  serviceName: row<string>(
    'OTEL_SERVICE_NAME',
    'nemo-gym',
    '`nemo-gym`',
    '1 to 256 characters, no control characters',
    'always',
    (text) => (/^[^\p{Cc}]{1,256}$/u.test(text) ? text : undefined),
  ),
  prometheusHost: row<string>(
    'OTEL_EXPORTER_PROMETHEUS_HOST',
    '127.0.0.1',
    '`127.0.0.1` (loopback only)',
    'a host name or IP address, no spaces or slashes',
    'metrics on, exporter `prometheus`',
    (text) => (/^[^\s/]{1,253}$/.test(text) ? text : undefined),
  ),
  prometheusPort: row<number>(
    'OTEL_EXPORTER_PROMETHEUS_PORT',
    9464,
    '`9464`',
    'a whole number from 0 to 65535 (0 binds an ephemeral port)',
    'metrics on, exporter `prometheus`',
    wholeNumber(0, 65_535),
  ),
  // Any positive whole number, as OpenTelemetry says; above the longest timer it is capped (config.ts).
  metricExportIntervalMillis: row<number>(
    'OTEL_METRIC_EXPORT_INTERVAL',
    60000,
    '`60000`',
    `a positive whole number of milliseconds, used up to ${MAX_TIMER_MILLIS}`,
    PERIODIC,
    wholeNumber(1),
  ),
  metricExportTimeoutMillis: row<number>(
    'OTEL_METRIC_EXPORT_TIMEOUT',
    30000,
    '`30000` (capped at the interval)',
    'a positive whole number of milliseconds',
    PERIODIC,
    wholeNumber(1),
  ),
} as const;

/** A signal's own OTLP endpoint and protocol, which fall back to the generic ones. */
function signalRows(signal: 'traces' | 'metrics') {
  const name = `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}`;
  const when = `${signal} on, exporter \`otlp\``;
  return {
    endpoint: row<string | undefined>(
      `${name}_ENDPOINT`,
      undefined,
      'from `OTEL_EXPORTER_OTLP_ENDPOINT`',
      'an http or https URL, used as is',
      when,
      httpUrl,
    ),
    protocol: row<string>(
      `${name}_PROTOCOL`,
      OTLP_PROTOCOL,
      'from `OTEL_EXPORTER_OTLP_PROTOCOL`',
      OTLP_PROTOCOL,
      when,
      protocol,
    ),
  };
}
const TRACES = signalRows('traces');
const METRICS = signalRows('metrics');

/** OTLP variables, checked per enabled signal when the exporter is `otlp`; the exporter reads the rest itself. */
export const OTLP_VARIABLES = {
  endpoint: row<string | undefined>(
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    undefined,
    '`http://localhost:4318` (the exporter default)',
    'an http or https URL; v1/traces and v1/metrics are appended to its path',
    'exporter `otlp`',
    httpUrl,
  ),
  tracesEndpoint: TRACES.endpoint,
  metricsEndpoint: METRICS.endpoint,
  protocol: row<string>(
    'OTEL_EXPORTER_OTLP_PROTOCOL',
    OTLP_PROTOCOL,
    '`http/protobuf`',
    'http/protobuf (the only OTLP transport this package ships)',
    'exporter `otlp`',
    protocol,
  ),
  tracesProtocol: TRACES.protocol,
  metricsProtocol: METRICS.protocol,
} as const;

const ON = '`NEMO_GYM_OTEL_ENABLED` on';

/** `OTEL_METRICS_EXPORTER` or `OTEL_TRACES_EXPORTER`: only `none` is read. */
function exporterSwitch(signal: 'metrics' | 'traces'): OtelVariable<boolean> {
  const allowed = `\`none\` switches ${signal} off; any other value is left to \`NEMO_GYM_OTEL_EXPORTER\``;
  const name = `OTEL_${signal.toUpperCase()}_EXPORTER`;
  return row<boolean>(name, false, 'unset', allowed, ON, (text) => text.toLowerCase() === 'none');
}

/** The specification's off-switches, read whenever Gym telemetry is on; `NEMO_GYM_OTEL_EXPORTER` chooses the exporter. */
export const OTEL_SWITCHES = {
  sdkDisabled: row<boolean>(
    'OTEL_SDK_DISABLED',
    false,
    '`false`',
    '`true` turns telemetry off (any case); anything else leaves it on, with one warning unless it is `false`',
    ON,
    (text) => text.toLowerCase() === 'true',
  ),
  metricsExporter: exporterSwitch('metrics'),
  tracesExporter: exporterSwitch('traces'),
} as const;
