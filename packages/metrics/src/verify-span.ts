// Gym's `gym.verify` span (Gym 0.7.0's `traced_verify_endpoint`): one span around one verify
// call, in span group `verify`, with `nemo.gym.server.name` when a name is given. It is the
// active span of the call (what the verifier starts is its child) and ends when the call
// settles; a throw or a rejection is recorded on it with an error status and passed on
// unchanged. Off (no tracer provider given, and traces not exporting or the group off), the
// call runs as it is, with no clock read or allocation.

import { isPromise } from 'node:util/types';
import { ATTR_SERVER_NAME, SERVER_NAME_PATTERN, SPAN_VERIFY } from '@gym/constants';
import { currentSpanGroups, isTracesExporting } from '@gym/core';
import { invalidChoice, resolveTracer } from '@gym/core/internal';
import { context, type Span, SpanStatusCode, type TracerProvider, trace } from '@opentelemetry/api';
import { reporter, SCOPE } from './scope.js';

/** Where and how {@link traceVerify} records. */
export interface VerifySpanOptions {
  /** `nemo.gym.server.name` on the span; matches `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`. */
  readonly serverName?: string | undefined;
  /** Record here, whatever the span groups. Absent: the global TracerProvider while traces export and `verify` is on. */
  readonly tracerProvider?: TracerProvider | undefined;
}

/**
 * Runs `verify` inside Gym's `gym.verify` span and returns exactly what it returns (a promise
 * comes back as one that settles the same way). Throws a `RangeError` at once for a server
 * name that is not one (on or off); nothing else here throws.
 *
 * ```ts
 * const result = await traceVerify(() => verifier.run(job), { serverName: 'math_verifier' });
 * ```
 */
export function traceVerify<T>(verify: () => T, options?: VerifySpanOptions): T {
  const serverName = options?.serverName;
  if (serverName !== undefined && (typeof serverName !== 'string' || !SERVER_NAME_PATTERN.test(serverName))) {
    throw invalidChoice('serverName', serverName, `a string matching ${SERVER_NAME_PATTERN}`);
  }
  if (options?.tracerProvider == null && (!isTracesExporting() || !currentSpanGroups().has('verify'))) return verify();
  const span = startSpan(options, serverName);
  if (span === undefined) return verify();
  let result: T;
  try {
    result = context.with(trace.setSpan(context.active(), span), verify);
  } catch (error) {
    end(span, error, true);
    throw error;
  }
  const then = (result as { then?: unknown } | null | undefined)?.then;
  if (typeof then !== 'function') {
    end(span, undefined, false);
    return result;
  }
  if (isPromise(result)) {
    return then.call(
      result,
      (value: unknown) => {
        end(span, undefined, false);
        return value;
      },
      (error: unknown) => {
        end(span, error, true);
        throw error;
      },
    ) as T;
  }
  then.call(
    result,
    () => end(span, undefined, false),
    (error: unknown) => end(span, error, true),
  );
  return result;
}

function startSpan(options: VerifySpanOptions | undefined, serverName: string | undefined): Span | undefined {
  try {
    const tracer = resolveTracer(options, SCOPE, reporter);
    return tracer?.startSpan(
      SPAN_VERIFY,
      serverName === undefined ? {} : { attributes: { [ATTR_SERVER_NAME]: serverName } },
    );
  } catch (error) {
    reporter.warnOnce('verify-span', 'starting the gym.verify span failed; the call runs without it', error);
    return undefined;
  }
}

function end(span: Span, error: unknown, failed: boolean): void {
  try {
    if (failed) {
      const exception = error instanceof Error ? error : new Error(String(error));
      span.recordException(exception);
      span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
    }
    span.end();
  } catch (caught) {
    reporter.warnOnce('verify-span', 'ending the gym.verify span failed', caught);
  }
}
