// The `prometheus` option of `initTelemetry`: the endpoint's client bounds (options, not variables:
// no standard OTEL_* one exists). The defaults suit a scraper; Node's own (headers 60 s, request
// 300 s) let a slow client hold a socket for minutes. No connection cap by default: Node's
// refuses newcomers at accept, which locked the scraper out of a crowd (see the README).

import { describeValue, invalidChoice } from '@gym/core/internal';
import type { PrometheusEndpointLimits } from './types.js';

/** The bounds in force: every deadline, and the connection cap when one was asked for. */
export type PrometheusLimits = Readonly<
  Required<Omit<PrometheusEndpointLimits, 'maxConnections'>> & Pick<PrometheusEndpointLimits, 'maxConnections'>
>;

/** The bounds used for an option that is not given. */
export const PROMETHEUS_LIMITS_DEFAULTS: PrometheusLimits = Object.freeze({
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
});

type LimitKey = keyof PrometheusEndpointLimits;
const KEYS: LimitKey[] = ['headersTimeoutMs', 'requestTimeoutMs', 'keepAliveTimeoutMs', 'maxConnections'];

/**
 * The bounds `value` (the `prometheus` option) asks for, every deadline filled in. Throws a
 * `TypeError` or `RangeError` naming the option, the value and what is allowed, for anything
 * that is not `undefined` or an object of known keys with whole numbers in range, and when
 * the request timeout is shorter than the headers timeout (Node refuses that pair).
 */
export function checkPrometheusLimits(value: unknown): PrometheusLimits {
  const what = 'initTelemetry: options.prometheus';
  if (value === undefined) return PROMETHEUS_LIMITS_DEFAULTS;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${what} must be an object of HTTP limits when given; got ${describeValue(value)}`);
  }
  const given = value as Partial<Record<LimitKey, unknown>>;
  for (const name of Object.keys(given)) {
    if (!(KEYS as string[]).includes(name)) throw invalidChoice(`${what}: an option name`, name, KEYS);
  }
  const limits: Partial<Record<LimitKey, number>> = { ...PROMETHEUS_LIMITS_DEFAULTS };
  for (const key of KEYS) {
    const one = given[key];
    if (one === undefined) continue;
    const [max, unit] = key === 'maxConnections' ? [65_536, 'connections'] : [600_000, 'milliseconds'];
    const allowed = `a whole number of ${unit} from 1 to ${max}`;
    if (typeof one !== 'number') throw new TypeError(`${what}.${key} must be ${allowed}; got ${describeValue(one)}`);
    if (!Number.isInteger(one) || one < 1 || one > max) throw invalidChoice(`${what}.${key}`, one, allowed);
    limits[key] = one;
  }
  const { headersTimeoutMs = 0, requestTimeoutMs = 0 } = limits;
  if (requestTimeoutMs < headersTimeoutMs) {
    const shown = given.requestTimeoutMs === undefined ? ' (the default)' : '';
    throw invalidChoice(
      `${what}.requestTimeoutMs${shown}`,
      requestTimeoutMs,
      `at least headersTimeoutMs (${headersTimeoutMs})`,
    );
  }
  return Object.freeze(limits) as PrometheusLimits;
}
