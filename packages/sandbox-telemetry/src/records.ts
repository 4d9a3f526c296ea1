// The request and allocation records: one span each, written and ended at once (a record, not
// a measure of how long provisioning took). Both pass the gate before they read any input, and
// whatever goes wrong after it (a provider that throws, a tracer that fails) is reported once
// and dropped: the sandbox keeps running.

import { randomUUID } from 'node:crypto';
import {
  ATTR_SANDBOX_ID,
  ATTR_SANDBOX_REQUEST_ID,
  SPAN_SANDBOX_ALLOCATION,
  SPAN_SANDBOX_REQUEST,
} from '@gym/constants';
import { context, SpanKind } from '@opentelemetry/api';
import { allocationAttributes, callerAttributes, recordAttributes, requestedAttributes } from './attribute-writer.js';
import { reporter, sandboxTracer } from './scope.js';
import type {
  RecordRequestOptions,
  ResourceAllocation,
  ResourceProvider,
  SandboxAttributes,
  SandboxHandle,
  SandboxSpec,
  SandboxTelemetryOptions,
} from './types.js';

/** What {@link recordRequest} returns while nothing is recorded: shared, frozen, empty. */
const NOT_RECORDED: SandboxAttributes = Object.freeze({});
const NOTHING: Promise<undefined> = Promise.resolve(undefined);

/**
 * Records one sandbox request before provisioning (a create that then fails still counts) and
 * returns the attributes every later record of that sandbox carries: a new request id and the
 * caller's `attributes`. While nothing would be exported, a shared empty object.
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
    // Own keys first: the SDK's attribute count limit then drops caller keys first.
    const own = { [ATTR_SANDBOX_REQUEST_ID]: requestId, ...requestedAttributes(spec), ...caller };
    tracer
      .startSpan(
        SPAN_SANDBOX_REQUEST,
        { kind: SpanKind.INTERNAL, attributes: own },
        options?.context ?? context.active(),
      )
      .end();
  } catch (error) {
    reporter.warnOnce('request-span', 'writing a gym.sandbox.request span failed; it was dropped', error);
  }
  return carried;
}

/**
 * Asks `provider` what it gave an owned sandbox and records it, parented to `handle.context`
 * (else the active context). Resolves to the allocation when recorded, else `undefined`
 * (nothing exporting: the provider is not even asked). Never rejects.
 */
export function recordAllocation<H extends SandboxHandle>(
  handle: H,
  provider: ResourceProvider<H>,
  attributes: SandboxAttributes,
  options?: SandboxTelemetryOptions,
): Promise<ResourceAllocation | undefined> {
  const tracer = sandboxTracer(options);
  if (tracer === undefined || !handle.owned || provider.resourceAllocation === undefined) return NOTHING;
  const parent = handle.context ?? context.active();
  return (async () => {
    try {
      const allocation = await provider.resourceAllocation!(handle);
      const own = { [ATTR_SANDBOX_ID]: handle.id, ...allocationAttributes(allocation) };
      const span = { kind: SpanKind.INTERNAL, attributes: recordAttributes(attributes, own) };
      tracer.startSpan(SPAN_SANDBOX_ALLOCATION, span, parent).end();
      return allocation;
    } catch (error) {
      reporter.warnOnce('allocation', 'a sandbox allocation could not be told or written; it was dropped', error);
      return undefined;
    }
  })();
}
