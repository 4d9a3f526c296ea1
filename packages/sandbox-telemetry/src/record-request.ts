// A sandbox request is recorded the moment it is made, before provisioning: a request
// whose create then fails must still be counted, or a dashboard of "asked vs given" would
// only ever see the successes. The span is written and ended at once; it is a record, not
// a measure of how long provisioning took.

import { randomUUID } from 'node:crypto';
import { ATTR_SANDBOX_REQUEST_ID, SPAN_SANDBOX_REQUEST } from '@gym/constants';
import { SpanKind } from '@opentelemetry/api';
import { callerAttributes, requestedAttributes } from './attribute-writer.js';
import { reporter } from './scope.js';
import { parentContext, sandboxTracer } from './tracer-gate.js';
import type { RecordRequestOptions, SandboxAttributes, SandboxSpec } from './types.js';

/** What {@link recordRequest} returns while nothing is recorded: shared, frozen, empty. */
const NOT_RECORDED: SandboxAttributes = Object.freeze({});

/**
 * Records one sandbox request: mints `nemo.gym.sandbox.request.id` (a UUID, new per call),
 * writes one `gym.sandbox.request` span at once with that id, the requested shape
 * (`nemo.gym.sandbox.requested.*`) and the caller's `attributes`, and returns the frozen
 * attributes every later record of that sandbox carries (the request id plus the caller's);
 * hand them to {@link recordAllocation} and {@link ResourceSampler}.
 *
 * Gate first: when nothing would be exported it returns a shared empty object without
 * reading `spec` or `attributes`. Caller keys must start with `nemo.gym.sandbox.` and not be
 * written by this package itself; values are strings, booleans or finite numbers. Anything
 * else, and a bad amount in the spec, is left out with one `diag` warning. Never throws.
 */
export function recordRequest(
  spec: SandboxSpec,
  attributes?: SandboxAttributes,
  options?: RecordRequestOptions,
): SandboxAttributes {
  const tracer = sandboxTracer(options);
  if (tracer === undefined) return NOT_RECORDED;
  let carried = NOT_RECORDED;
  try {
    const requestId = randomUUID();
    const caller = attributes === undefined ? {} : callerAttributes(attributes, 'recordRequest attributes');
    carried = Object.freeze({ [ATTR_SANDBOX_REQUEST_ID]: requestId, ...caller });
    tracer
      .startSpan(
        SPAN_SANDBOX_REQUEST,
        // Own keys first: the SDK's attribute count limit then drops caller keys first.
        {
          kind: SpanKind.INTERNAL,
          attributes: { [ATTR_SANDBOX_REQUEST_ID]: requestId, ...requestedAttributes(spec), ...caller },
        },
        parentContext(options?.context),
      )
      .end();
  } catch (error) {
    reporter.warnOnce('request-span', 'writing a gym.sandbox.request span failed; it was dropped', error);
  }
  return carried;
}
