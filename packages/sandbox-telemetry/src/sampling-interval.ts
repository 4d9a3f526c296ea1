// Whether and how often to sample sandboxes, decided without importing @gym/otel-bootstrap:
// the shared telemetry state of @gym/constants (or, when nobody published one, the
// OpenTelemetry API globals) says whether traces really export and which span groups are
// on. Sampling costs a provider call per sandbox per tick, so it is off unless every
// condition holds; a malformed setting turns it off with one warning, never an exception.

import { currentSpanGroups, getTelemetryState, isTracesExporting } from '@gym/core';
import { ENV_SANDBOX_SAMPLE_INTERVAL, ENV_SANDBOX_SAMPLE_INTERVAL_FALLBACK } from './attribute-keys.js';
import { PROCESS_SEEN, warnOnce } from './report.js';

/** A plain decimal number of seconds: `5`, `0.5`, `.25`, `10.`; no sign, exponent or hex. */
const DECIMAL = /^(?:\d+\.?\d*|\.\d+)$/;
/** Longest interval a timer honours, in seconds (2^31 - 1 ms). */
const MAX_SECONDS = (2 ** 31 - 1) / 1000;

let cachedRaw: string | undefined;
let cachedSeconds = 0;

/**
 * Seconds between sandbox resource samples, or 0 (do not sample). Non-zero only when
 * traces are really exported (published telemetry state, else a TracerProvider registered
 * with the OpenTelemetry API), the `sandbox` span group is on, and the interval is > 0.
 * The interval is the published state's `sandboxSampleIntervalSeconds` when a state was
 * published, else `NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS` (falling back to
 * `NEMO_LENS_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS` when unset or blank). A malformed
 * value (not a plain non-negative decimal, or longer than a timer allows) gives 0 and one
 * diag warning per distinct value.
 */
export function samplingInterval(): number {
  if (!isTracesExporting() || !currentSpanGroups().has('sandbox')) return 0;
  const state = getTelemetryState();
  if (state !== undefined) return state.sandboxSampleIntervalSeconds;
  const raw =
    nonBlank(process.env[ENV_SANDBOX_SAMPLE_INTERVAL]) ?? nonBlank(process.env[ENV_SANDBOX_SAMPLE_INTERVAL_FALLBACK]);
  if (raw === undefined) return 0;
  if (raw !== cachedRaw) {
    cachedSeconds = parseSeconds(raw);
    cachedRaw = raw;
  }
  return cachedSeconds;
}

function parseSeconds(raw: string): number {
  const text = raw.trim();
  const seconds = DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (Number.isFinite(seconds) && seconds <= MAX_SECONDS) return seconds;
  const variable =
    nonBlank(process.env[ENV_SANDBOX_SAMPLE_INTERVAL]) === undefined
      ? ENV_SANDBOX_SAMPLE_INTERVAL_FALLBACK
      : ENV_SANDBOX_SAMPLE_INTERVAL;
  warnOnce(
    PROCESS_SEEN,
    `interval:${raw}`,
    () =>
      `${variable}=${JSON.stringify(raw)} is not a number of seconds (allowed: a non-negative decimal such as 5 or 0.5, ` +
      `at most ${MAX_SECONDS}); sandbox resource sampling is off`,
  );
  return 0;
}

function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
