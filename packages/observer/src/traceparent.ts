// The W3C `traceparent` of a parent span, read from the environment: external input, parsed
// strictly (W3C Trace Context, level 1). Anything else is no parent at all, never a guess.

import { type SpanContext, TraceFlags } from '@opentelemetry/api';

/** version-traceid-parentid-flags, lowercase hex; a future version may append `-…` fields. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[^\s]*)?$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);
/** Longer than any traceparent worth reading (55 characters in version 00). */
const MAX_LENGTH = 512;

/**
 * The remote span context of a `traceparent` value, or `undefined` when it is absent or not a
 * valid one: version `ff`, version `00` with extra fields, upper case, an all-zero trace or span
 * id, surrounding spaces and anything of the wrong shape are all rejected. Never throws.
 */
export function parseTraceparent(value: unknown): SpanContext | undefined {
  if (typeof value !== 'string' || value.length > MAX_LENGTH) return undefined;
  const match = TRACEPARENT.exec(value);
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined;
  // Only the sampled bit is defined; other bits are not carried over.
  const traceFlags = Number.parseInt(flags, 16) & TraceFlags.SAMPLED;
  return { traceId, spanId, traceFlags, isRemote: true };
}
