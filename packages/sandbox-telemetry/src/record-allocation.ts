// What the infrastructure actually gave a sandbox is recorded once, by the owner, as one
// `gym.sandbox.allocation` span next to the request. It is asked of the provider only when
// something would be exported, and whatever goes wrong (the provider throws or rejects, the
// tracer fails) is logged once and dropped: the sandbox keeps running.

import { ATTR_SANDBOX_ID, SPAN_SANDBOX_ALLOCATION } from '@gym/constants';
import { SpanKind } from '@opentelemetry/api';
import { allocationAttributes, recordAttributes } from './attribute-writer.js';
import { reporter } from './scope.js';
import { parentContext, sandboxTracer } from './tracer-gate.js';
import type {
  ResourceAllocation,
  ResourceProvider,
  SandboxAttributes,
  SandboxHandle,
  SandboxTelemetryOptions,
} from './types.js';

const NOTHING: Promise<undefined> = Promise.resolve(undefined);

/**
 * Asks `provider` what it gave the sandbox and records it as one `gym.sandbox.allocation`
 * span (parented to `handle.context`, else the active context) carrying
 * `nemo.gym.sandbox.id`, {@link allocationAttributes} and `attributes` (from
 * {@link recordRequest}).
 *
 * Resolves to the allocation when it was recorded, else `undefined`: nothing is exported (the
 * provider is not even asked), the handle is borrowed (its owner records the allocation), the
 * provider has no `resourceAllocation`, or it failed (logged once through `diag`). The promise
 * never rejects.
 */
export function recordAllocation<H extends SandboxHandle>(
  handle: H,
  provider: ResourceProvider<H>,
  attributes: SandboxAttributes,
  options?: SandboxTelemetryOptions,
): Promise<ResourceAllocation | undefined> {
  const tracer = sandboxTracer(options);
  if (tracer === undefined || !handle.owned || typeof provider.resourceAllocation !== 'function') return NOTHING;
  const parent = parentContext(handle.context);
  return (async () => {
    try {
      const allocation = await provider.resourceAllocation!(handle);
      const own = { [ATTR_SANDBOX_ID]: handle.id, ...allocationAttributes(allocation) };
      tracer
        .startSpan(
          SPAN_SANDBOX_ALLOCATION,
          { kind: SpanKind.INTERNAL, attributes: recordAttributes(attributes, own) },
          parent,
        )
        .end();
      return allocation;
    } catch (error) {
      reporter.warnOnce('allocation', 'a sandbox allocation could not be told or written; it was dropped', error);
      return undefined;
    }
  })();
}
