// The bounds of the Prometheus endpoint each demo process serves (given to initTelemetry):
// the same header, request and keep-alive deadlines as a resources server's own routes
// (`http-limits.ts`, set by the same flags), so a slow client is held no longer on /metrics
// than on /verify. The connection cap is smaller than the routes' 4,096: an endpoint has a
// handful of scrapers (the orchestrator, a Prometheus), and at the cap idle connections are
// closed to make room, so a pile of idle sockets cannot lock a scraper out.

import type { PrometheusEndpointLimits } from '@gym/otel-bootstrap';
import type { HttpLimits } from './http-limits.js';
import { serverConfigSchema } from './server-config.js';

/** Open connections to one Prometheus endpoint at most. */
export const METRICS_MAX_CONNECTIONS = 64;

/** The endpoint's bounds for a process whose own HTTP deadlines are `limits`. */
export function metricsEndpointLimits(
  limits: Pick<HttpLimits, 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs'>,
): PrometheusEndpointLimits {
  return {
    headersTimeoutMs: limits.headersTimeoutMs,
    requestTimeoutMs: limits.requestTimeoutMs,
    keepAliveTimeoutMs: limits.keepAliveTimeoutMs,
    maxConnections: METRICS_MAX_CONNECTIONS,
  };
}

/** The endpoint's bounds for a process with a resources server's default deadlines (the orchestrator). */
export function defaultMetricsEndpointLimits(): PrometheusEndpointLimits {
  return metricsEndpointLimits(serverConfigSchema.parse({}));
}
