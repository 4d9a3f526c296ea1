// The `prometheus` option of `initTelemetry`: the endpoint's client bounds (options, not variables:
// no standard OTEL_* one exists). Node's own deadlines (headers 60 s, request 300 s) let a slow
// client hold a socket for minutes; Node's connection cap locks the scraper out of a crowd, so
// there is none by default (see the README).

import { invalidChoice } from '@gym/core/internal';
import type { PrometheusEndpointLimits } from './types.js';

/** The bounds in force: every deadline, and the connection cap when one was asked for. */
export type PrometheusLimits = Readonly<
  Required<Omit<PrometheusEndpointLimits, 'maxConnections'>> & Pick<PrometheusEndpointLimits, 'maxConnections'>
>;

export const PROMETHEUS_LIMITS_DEFAULTS: PrometheusLimits = Object.freeze({
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
});

const KEYS = ['headersTimeoutMs', 'requestTimeoutMs', 'keepAliveTimeoutMs', 'maxConnections'] as const;

/**
 * The bounds `given` asks for, every deadline filled in. Throws a `RangeError` naming the
 * option, the value and what is allowed for a value that is not a whole number in range, and
 * when the request timeout is shorter than the headers timeout (Node refuses that pair).
 */
export function checkPrometheusLimits(given: PrometheusEndpointLimits = {}): PrometheusLimits {
  const what = 'initTelemetry: options.prometheus';
  const limits: Partial<Record<(typeof KEYS)[number], number>> = { ...PROMETHEUS_LIMITS_DEFAULTS };
  for (const key of KEYS) {
    const value = given[key];
    if (value === undefined) continue;
    const [max, unit] = key === 'maxConnections' ? [65_536, 'connections'] : [600_000, 'milliseconds'];
    if (!Number.isInteger(value) || value < 1 || value > max) {
      throw invalidChoice(`${what}.${key}`, value, `a whole number of ${unit} from 1 to ${max}`);
    }
    limits[key] = value;
  }
  const { headersTimeoutMs = 0, requestTimeoutMs = 0 } = limits;
  if (requestTimeoutMs < headersTimeoutMs) {
    const shown = given.requestTimeoutMs === undefined ? ' (the default)' : '';
    const allowed = `at least headersTimeoutMs (${headersTimeoutMs})`;
    throw invalidChoice(`${what}.requestTimeoutMs${shown}`, requestTimeoutMs, allowed);
  }
  return Object.freeze(limits) as PrometheusLimits;
}
