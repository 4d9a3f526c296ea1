// The client bounds of the Prometheus endpoint, and the check of the option that sets them.
// The endpoint is an HTTP server in every process of a fleet; without bounds, one slow client
// holds a socket for as long as Node's defaults allow (headers 60 s, request 300 s, checked
// every 30 s) and a pile of idle sockets locks the scraper out. The defaults suit a scraper:
// Prometheus sends a few hundred bytes of headers at once and no body, so seconds are generous.
//
// These are options of `initTelemetry`, not environment variables: the bounds belong to the
// server's own HTTP policy (its code knows them, the orchestrator does not), and no standard
// OTEL_* variable exists for them. The check is plain code, not zod: it runs on every
// `initTelemetry` call, also when telemetry is off, and an off process must not load zod.

import { describeValue, invalidChoice } from '@gym/core/internal';
import type { PrometheusEndpointLimits } from './types.js';

/** The bounds used for an option that is not given. */
export const PROMETHEUS_LIMITS_DEFAULTS: Readonly<Required<PrometheusEndpointLimits>> = Object.freeze({
  /** A scraper sends its headers in one packet; 5 s is Node's keep-alive default too. */
  headersTimeoutMs: 5_000,
  /** A scrape has no body: the whole request is the headers, plus slack. */
  requestTimeoutMs: 10_000,
  /** Idle between scrapes; Prometheus reconnects when it was closed. */
  keepAliveTimeoutMs: 5_000,
  /** A handful of scrapers per process; room to spare, and each socket is cheap. */
  maxConnections: 64,
});

type LimitKey = keyof PrometheusEndpointLimits;

/** The allowed range of each bound. */
const RANGES: Readonly<Record<LimitKey, readonly [number, number, string]>> = {
  headersTimeoutMs: [1, 600_000, 'milliseconds'],
  requestTimeoutMs: [1, 600_000, 'milliseconds'],
  keepAliveTimeoutMs: [1, 600_000, 'milliseconds'],
  maxConnections: [1, 65_536, 'connections'],
};

const KEYS = Object.keys(RANGES) as LimitKey[];

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
    const [min, max, unit] = RANGES[key];
    const allowed = `a whole number of ${unit} from ${min} to ${max}`;
    if (typeof one !== 'number') throw new TypeError(`${what}.${key} must be ${allowed}; got ${describeValue(one)}`);
    if (!Number.isInteger(one) || one < min || one > max) throw invalidChoice(`${what}.${key}`, one, allowed);
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
