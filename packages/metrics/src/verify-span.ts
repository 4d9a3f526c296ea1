// Gym's `gym.verify` span (Gym 0.7.0's `traced_verify_endpoint`), in span group `verify`. Off, the
// call runs as it is, with no clock read or allocation.

import { ATTR_SERVER_NAME, SERVER_NAME_PATTERN, SPAN_VERIFY } from '@gym/constants';
import { currentSpanGroups, isTracesExporting } from '@gym/core';
import { invalidChoice, observeSettled, resolveTracer } from '@gym/core/internal';
import { context, type Span, SpanStatusCode, type TracerProvider, trace } from '@opentelemetry/api';
import { reporter, SCOPE } from './gym-metrics.js';

/** Where and how {@link traceVerify} records. */
export interface VerifySpanOptions {
  /** `nemo.gym.server.name` on the span; matches `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`. */
  readonly serverName?: string | undefined;
  /** Record here, whatever the span groups. Absent: the global TracerProvider while traces export and `verify` is on. */
  readonly tracerProvider?: TracerProvider | undefined;
}

/**
 * Runs `verify` inside Gym's `gym.verify` span, the active span of the call, and returns
 * exactly what it returns (a promise comes back as one that settles the same way; another
 * thenable keeps its API, and its work starts only when the caller calls `then`). The span ends
 * when the call first settles; a throw or a rejection is recorded on it with an error status
 * and passed on unchanged. Throws a `RangeError` at once for a server name that is not one
 * (on or off); nothing else here throws.
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
  let span: Span | undefined;
  try {
    const attributes = serverName === undefined ? undefined : { [ATTR_SERVER_NAME]: serverName };
    span = resolveTracer(options, SCOPE, reporter)?.startSpan(SPAN_VERIFY, { attributes });
  } catch (error) {
    reporter.warnOnce('verify-span', 'starting the gym.verify span failed; the call runs without it', error);
  }
  if (span === undefined) return verify();
  return observeSettled(
    () => context.with(trace.setSpan(context.active(), span), verify),
    (ok, outcome) => {
      try {
        if (!ok) {
          const exception = outcome instanceof Error ? outcome : new Error(String(outcome));
          span.recordException(exception);
          span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
        }
        span.end();
      } catch (caught) {
        reporter.warnOnce('verify-span', 'ending the gym.verify span failed', caught);
      }
    },
  );
}
