// The four lifecycle recorders, for callers that count and time by hand. Most code wants
// the per-sandbox helper (sandbox-lifecycle.ts), which applies Gym's edge rules for it.
//
// Never throws for telemetry's sake: a meter that fails, an option getter that throws, a bad
// number (dropped with one warning per kind: it is a measurement, not a programming error).
// A provider name that is not one throws a RangeError at once, on or off, because it is
// chosen in code.

import { describeValue } from '@gym/core';
import { instrumentsFor, providerAttributes, reportMetricFailure } from './lifecycle-instruments.js';
import { reporter } from './report.js';
import type { SandboxMetricOptions } from './types.js';

/**
 * Adds `delta` to `gym.sandbox.active` (up-down counter, `{sandbox}`, by
 * `nemo.gym.sandbox.provider`): `+1` when this process creates a sandbox, `-1` when it
 * releases it. A non-integer `delta` is dropped with one warning.
 */
export function recordSandboxActive(delta: number, options: SandboxMetricOptions): void {
  const attributes = providerAttributes(options);
  if (attributes === undefined) return;
  if (!Number.isInteger(delta)) {
    reportInvalid('recordSandboxActive', 'delta', delta, 'an integer (+1 created, -1 released)');
    return;
  }
  try {
    instrumentsFor(options)?.active.add(delta, attributes);
  } catch (error) {
    reportMetricFailure(error);
  }
}

/**
 * Records one sandbox's time to create, retries included, into
 * `gym.sandbox.startup_duration_ms` (histogram, `ms`, `SANDBOX_DURATION_BOUNDARIES_MS`). A
 * negative, NaN, infinite or non-number `ms` is dropped with one warning.
 */
export function recordSandboxStartup(ms: number, options: SandboxMetricOptions): void {
  const attributes = providerAttributes(options);
  if (attributes === undefined) return;
  if (!isDuration(ms)) {
    reportInvalid('recordSandboxStartup', 'ms', ms, 'a finite number of milliseconds >= 0');
    return;
  }
  try {
    instrumentsFor(options)?.startupDuration.record(ms, attributes);
  } catch (error) {
    reportMetricFailure(error);
  }
}

/**
 * Records one exec inside a sandbox into `gym.sandbox.exec_duration_ms` (histogram, `ms`,
 * `SANDBOX_DURATION_BOUNDARIES_MS`). A negative, NaN, infinite or non-number `ms` is dropped
 * with one warning.
 */
export function recordSandboxExecDuration(ms: number, options: SandboxMetricOptions): void {
  const attributes = providerAttributes(options);
  if (attributes === undefined) return;
  if (!isDuration(ms)) {
    reportInvalid('recordSandboxExecDuration', 'ms', ms, 'a finite number of milliseconds >= 0');
    return;
  }
  try {
    instrumentsFor(options)?.execDuration.record(ms, attributes);
  } catch (error) {
    reportMetricFailure(error);
  }
}

/** Adds one to `gym.sandbox.create_retry_total` (counter, unit `1`): a create attempt was retried. */
export function recordSandboxCreateRetry(options: SandboxMetricOptions): void {
  const attributes = providerAttributes(options);
  if (attributes === undefined) return;
  try {
    instrumentsFor(options)?.createRetries.add(1, attributes);
  } catch (error) {
    reportMetricFailure(error);
  }
}

/** True for a finite number >= 0. */
function isDuration(ms: unknown): ms is number {
  return typeof ms === 'number' && ms >= 0 && ms !== Number.POSITIVE_INFINITY;
}

/** Warns, once per recorder and field, that a measurement was dropped. */
function reportInvalid(recorder: string, field: string, value: unknown, allowed: string): void {
  reporter.warnOnce(
    `${recorder}.${field}`,
    () =>
      `${recorder}: ${field} = ${describeValue(value)} is not ${allowed}; it was dropped ` +
      `(later bad values of ${field} are dropped silently)`,
  );
}
