// A sandbox request is recorded the moment it is made, before provisioning: a request
// whose create then fails must still be counted, or a dashboard of "asked vs given" would
// only ever see the successes. The span is written and ended at once; it is a record, not
// a measure of how long provisioning took.

import { randomUUID } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import { ATTR_SANDBOX_REQUEST_ID, SPAN_SANDBOX_REQUEST } from './attribute-keys.js';
import { checkCarriedAttributes } from './carried-attributes.js';
import { ownOptionOrUnset } from './own-data.js';
import { reporter } from './report.js';
import { requestedAttributes } from './resource-attributes.js';
import { parentContext, sandboxTracer } from './tracer-gate.js';
import type { RecordRequestOptions, SandboxAttributes, SandboxSpec } from './types.js';

/** What {@link recordRequest} returns while nothing is recorded: shared, frozen, empty. */
const NOT_RECORDED: SandboxAttributes = Object.freeze({});

/**
 * Records one sandbox request: mints `nemo.gym.sandbox.request.id` (a UUID, new per call),
 * emits one `gym.sandbox.request` span at once with that id, the requested shape
 * (`nemo.gym.sandbox.requested.*`) and the caller's `attributes`, and returns the frozen
 * attributes every later record of that sandbox carries (the request id plus the caller's);
 * hand them to {@link recordAllocation} and {@link ResourceSampler}.
 *
 * Gate first: when nothing would be exported it returns a shared empty object without
 * reading `spec` or `attributes`. Otherwise bad input throws {@link SandboxInputError}
 * (keys must start with `nemo.gym.sandbox.` and not be reserved; values primitive). At most
 * 32 caller attributes are carried and string values are cut at 256 characters (one warning).
 * Inputs are read from their own properties only. A failing tracer or option getter is
 * reported once through `diag` and never thrown.
 */
export function recordRequest(
  spec: SandboxSpec,
  attributes?: SandboxAttributes,
  options?: RecordRequestOptions,
): SandboxAttributes {
  const tracer = sandboxTracer(options);
  if (tracer === undefined) return NOT_RECORDED;
  const requested = requestedAttributes(spec);
  const caller =
    attributes === undefined ? NOT_RECORDED : checkCarriedAttributes(attributes, 'request attributes', false);
  const requestId = randomUUID();
  const carried: SandboxAttributes = Object.freeze(
    Object.assign(Object.create(null), { [ATTR_SANDBOX_REQUEST_ID]: requestId }, caller),
  );
  try {
    const parent = parentContext(ownOptionOrUnset(options, 'context'));
    tracer
      .startSpan(
        SPAN_SANDBOX_REQUEST,
        // Own keys first: the SDK's attribute count limit then drops caller keys first.
        { kind: SpanKind.INTERNAL, attributes: { [ATTR_SANDBOX_REQUEST_ID]: requestId, ...requested, ...caller } },
        parent,
      )
      .end();
  } catch (error) {
    reporter.warnOnce('request-span', 'writing a gym.sandbox.request span failed; it was dropped', error);
  }
  return carried;
}
