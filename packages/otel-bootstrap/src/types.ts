// The public surface of @gym/otel-bootstrap: a config that mirrors the variables one to one, and
// a handle that says plainly what this process exports.

import type { ServerType } from '@gym/constants';
import type { TelemetryExporter } from '@gym/core/internal';
import type { Attributes, Meter, Tracer } from '@opentelemetry/api';

/** Instrumentation scope name of `TelemetryHandle.meter` and `.tracer`. */
export const SCOPE_NAME = '@gym/otel-bootstrap' as const;

/** One process's telemetry settings: each field is one variable of the README's table. */
export interface TelemetryConfig {
  readonly enabled: boolean;
  readonly spanGroups: string;
  readonly tracesEnabled: boolean;
  readonly metricsEnabled: boolean;
  readonly exporter: TelemetryExporter;
  /** `undefined` when unset; `initTelemetry` then falls back to `SLURM_JOB_ID`, else mints one. */
  readonly runId: string | undefined;
  readonly serviceNamePerServer: boolean;
  readonly sandboxResourceSampleIntervalSeconds: number;
  readonly observer: boolean;
  readonly shutdownTimeoutMillis: number;
  /** `OTEL_SERVICE_NAME`: the fleet's service name, before per-server suffixing. */
  readonly serviceName: string;
  readonly prometheusHost: string;
  readonly prometheusPort: number;
  readonly metricExportIntervalMillis: number;
  /** Capped at the interval. */
  readonly metricExportTimeoutMillis: number;
  /** From `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`; `undefined` leaves the exporter's default. */
  readonly otlpTracesEndpoint: string | undefined;
  /** The same for metrics. */
  readonly otlpMetricsEndpoint: string | undefined;
}

/**
 * What {@link loadTelemetryConfig} returns: a config, or an `error` naming every malformed
 * variable, its value and what is allowed; `warnings` either way.
 */
export type TelemetryConfigResult =
  | { readonly ok: true; readonly config: TelemetryConfig; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly error: string; readonly warnings: readonly string[] };

/** Receives the few messages an operator must see (malformed env, a failed setup, a failed export, …). */
export type TelemetryWarningHandler = (message: string) => void;

/** Bounds on the clients of the Prometheus endpoint; each one left out keeps its default. */
export interface PrometheusEndpointLimits {
  /** A client must send its request headers within this long after the connection or its previous request began (default 5000; 1 to 600000). */
  readonly headersTimeoutMs?: number;
  /** A client must send its whole request within this long (default 10000; 1 to 600000; at least `headersTimeoutMs`); also the longest a socket may make no progress while a request is read or answered. */
  readonly requestTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this long (default 5000; 1 to 600000). */
  readonly keepAliveTimeoutMs?: number;
  /** Open connections allowed (Node's `server.maxConnections`: beyond it a newcomer is closed at accept, so a crowd at the cap locks the scraper out); 1 to 65536, no cap by default. */
  readonly maxConnections?: number;
}

/** Options of {@link initTelemetry}. */
export interface InitTelemetryOptions {
  /** This server's name (`policy_model`, `math_verifier`, …): a non-empty string. */
  readonly serverName: string;
  /** One of `SERVER_TYPES`; `orchestrator` makes this process the writer of `gym.servers.active`. */
  readonly serverType: ServerType;
  /** Extra resource attributes, merged under the Gym ones (the Gym keys and `service.name` win). */
  readonly resourceAttributes?: Attributes;
  /** Where to read the variables; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where operator messages go; default `process.emitWarning` (stderr, never the console API). */
  readonly onWarning?: TelemetryWarningHandler;
  /** Bounds on the Prometheus endpoint's clients (timeouts, connection cap); the defaults hold when left out. */
  readonly prometheus?: PrometheusEndpointLimits;
}

/** Options of {@link configureTelemetryEnv}. */
export interface ConfigureTelemetryEnvOptions {
  /** Where operator messages go; default `process.emitWarning`. */
  readonly onWarning?: TelemetryWarningHandler;
}

/** What {@link initTelemetry} hands back when telemetry is on. Frozen. */
export interface TelemetryHandle {
  /** This process's meter (a no-op meter when metrics are not exporting). */
  readonly meter: Meter;
  /** This process's tracer (a no-op tracer when traces are not exporting). */
  readonly tracer: Tracer;
  /** `metricsExporting || tracesExporting`. */
  readonly isExporting: boolean;
  /** A MeterProvider with a real exporter receives metrics, and the libraries can see it (ours, or a reused one). */
  readonly metricsExporting: boolean;
  /** The same for a TracerProvider and spans. */
  readonly tracesExporting: boolean;
  /** The settings in force, with `runId` resolved. */
  readonly config: TelemetryConfig;
  /** The Gym `service.name` (`nemo-gym/policy_model`). */
  readonly serviceName: string;
  /** Whether what this process exports carries the Gym resource and the configured exporter: `false` with a reused provider. */
  readonly gymResourceApplied: boolean;
  /** With the `prometheus` exporter: the scrape URL actually bound, `http://host:port/metrics`. */
  readonly prometheusEndpoint?: string;
}
