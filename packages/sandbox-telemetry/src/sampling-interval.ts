// Whether and how often to sample sandboxes, decided without importing @gym/otel-bootstrap:
// @gym/core's shared telemetry state (or, when nobody published one, the OpenTelemetry API
// globals) says whether traces really export and which span groups are on, and @gym/core's
// one grammar reads the interval variable, so `1e1` is malformed here exactly as it is for
// the bootstrap. Sampling costs a provider call per sandbox per tick, so it is off unless
// every condition holds; a malformed or too short setting turns it off with one warning,
// never an exception.

import { currentSpanGroups, getTelemetryState, isTracesExporting } from '@gym/core';
import { GYM_VARIABLES, MAX_TIMER_SECONDS, MIN_SAMPLE_INTERVAL_SECONDS, readGymVariable } from '@gym/core/internal';
import { reporter } from './scope.js';

/**
 * Seconds between sandbox resource samples, or 0 (do not sample). Non-zero only when
 * traces are really exported (published telemetry state, else a TracerProvider registered
 * with the OpenTelemetry API), the `sandbox` span group is on, and the interval is > 0.
 * The interval is the published state's `sandboxSampleIntervalSeconds` when a state was
 * published, else `NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS` (falling back to
 * `NEMO_LENS_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS` when unset or blank): `0`, or a plain
 * decimal number of seconds from 0.1 to 2147483.647. Anything else (`1e1`, `-1`, `5s`, `0.05`)
 * gives 0 and one diag warning per distinct value.
 */
export function samplingInterval(): number {
  if (!isTracesExporting() || !currentSpanGroups().has('sandbox')) return 0;
  const state = getTelemetryState();
  if (state !== undefined)
    return checkedInterval(state.sandboxSampleIntervalSeconds, 'the published sandboxSampleIntervalSeconds');
  const read = readGymVariable(process.env, GYM_VARIABLES.sandboxResourceSampleIntervalSeconds);
  if (read.ok) return read.value;
  const { name, value } = read.from;
  reporter.warnOnce(`interval:${name}=${value}`, () => `${read.message}; sandbox resource sampling is off`);
  return 0;
}

/**
 * `seconds` when it is 0 or within [0.1, 2147483.647], else 0 with one warning per value:
 * shorter loops cost more than they tell, longer ones do not fit a timer. `where` names the
 * source in the warning.
 */
export function checkedInterval(seconds: number, where: string): number {
  if (seconds === 0 || (seconds >= MIN_SAMPLE_INTERVAL_SECONDS && seconds <= MAX_TIMER_SECONDS)) return seconds;
  reporter.warnOnce(
    `interval:${where}=${seconds}`,
    () =>
      `${where} = ${seconds} s is refused (allowed: 0, or ${MIN_SAMPLE_INTERVAL_SECONDS} to ${MAX_TIMER_SECONDS} s); ` +
      'sandbox resource sampling is off',
  );
  return 0;
}
