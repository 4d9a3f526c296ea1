// The `prometheus` option of `initTelemetry`: the client bounds of the Prometheus endpoint.
// Options, not environment variables: the bounds belong to the server's own HTTP policy, and no
// standard OTEL_* variable exists for them. The defaults suit a scraper, which sends a few
// hundred bytes of headers at once and no body; Node's own (headers 60 s, request 300 s,
// checked every 30 s) let one slow client hold a socket for minutes.

import { describeValue, invalidChoice } from '@gym/core/internal';
import type { PrometheusEndpointLimits } from './types.js';

/** The bounds used for an option that is not given. */
export const PROMETHEUS_LIMITS_DEFAULTS: Readonly<Required<PrometheusEndpointLimits>> = Object.freeze({
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 64,
});

type LimitKey = keyof PrometheusEndpointLimits;
const KEYS = Object.keys(PROMETHEUS_LIMITS_DEFAULTS) as LimitKey[];

/**
 * The bounds `value` (the `prometheus` option) asks for, every one filled in. Throws a
 * `TypeError` or `RangeError` naming the option, the value and what is allowed, for anything
 * that is not `undefined` or an object of known keys with whole numbers in range, and when
 * the request timeout is shorter than the headers timeout (Node refuses that pair).
 */
export function checkPrometheusLimits(value: unknown): Readonly<Required<PrometheusEndpointLimits>> {
  const what = 'initTelemetry: options.prometheus';
  if (value === undefined) return PROMETHEUS_LIMITS_DEFAULTS;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${what} must be an object of HTTP limits when given; got ${describeValue(value)}`);
  }
  const given = value as Partial<Record<LimitKey, unknown>>;
  for (const name of Object.keys(given)) {
    if (!(KEYS as string[]).includes(name)) throw invalidChoice(`${what}: an option name`, name, KEYS);
  }
  const limits = { ...PROMETHEUS_LIMITS_DEFAULTS };
  for (const key of KEYS) {
    const one = given[key];
    if (one === undefined) continue;
    const [max, unit] = key === 'maxConnections' ? [65_536, 'connections'] : [600_000, 'milliseconds'];
    const allowed = `a whole number of ${unit} from 1 to ${max}`;
    if (typeof one !== 'number') throw new TypeError(`${what}.${key} must be ${allowed}; got ${describeValue(one)}`);
    if (!Number.isInteger(one) || one < 1 || one > max) throw invalidChoice(`${what}.${key}`, one, allowed);
    limits[key] = one;
  }
  if (limits.requestTimeoutMs < limits.headersTimeoutMs) {
    const shown = given.requestTimeoutMs === undefined ? ' (the default)' : '';
    throw invalidChoice(
      `${what}.requestTimeoutMs${shown}`,
      limits.requestTimeoutMs,
      `at least headersTimeoutMs (${limits.headersTimeoutMs})`,
    );
  }
  return Object.freeze(limits);
}
