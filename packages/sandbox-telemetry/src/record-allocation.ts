// What the infrastructure actually gave a sandbox is recorded once, by the owner, as one
// `gym.sandbox.allocation` span next to the request. It is asked of the provider only when
// something would be exported, and whatever the provider does wrong (throws, rejects,
// returns a malformed allocation) is logged once and dropped: the sandbox keeps running.

import { SpanKind } from '@opentelemetry/api';
import { ATTR_SANDBOX_ID, SPAN_SANDBOX_ALLOCATION } from './attribute-keys.js';
import { checkCarriedAttributes, recordAttributes } from './carried-attributes.js';
import { reporter } from './report.js';
import { writeAllocation } from './resource-attributes.js';
import { parseResourceAllocation, viewSandboxHandle } from './schemas.js';
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
 * Resolves to the validated allocation when it was recorded, else `undefined`: nothing is
 * exported (the provider is not even asked), the handle is borrowed (its owner records the
 * allocation), the provider has no `resourceAllocation`, or it failed (logged once through
 * `diag`). The promise never rejects. Malformed `handle` or `attributes` are programming
 * errors and throw {@link SandboxInputError} synchronously.
 */
export function recordAllocation<H extends SandboxHandle>(
  handle: H,
  provider: ResourceProvider<H>,
  attributes: SandboxAttributes,
  options?: SandboxTelemetryOptions,
): Promise<ResourceAllocation | undefined> {
  const tracer = sandboxTracer(options);
  if (tracer === undefined) return NOTHING;
  const view = viewSandboxHandle(handle);
  const carried = checkCarriedAttributes(attributes, 'carried attributes', true);
  if (!view.owned) return NOTHING;
  const parent = parentContext(view.context);
  return (async () => {
    let allocation: ResourceAllocation;
    try {
      const ask = provider?.resourceAllocation;
      if (typeof ask !== 'function') return undefined;
      allocation = parseResourceAllocation(await ask.call(provider, handle));
    } catch (error) {
      reporter.warnOnce(
        'allocation-failed',
        'a provider could not tell a sandbox allocation; it was not recorded',
        error,
      );
      return undefined;
    }
    try {
      const own = { [ATTR_SANDBOX_ID]: view.id, ...writeAllocation(allocation) };
      tracer
        .startSpan(
          SPAN_SANDBOX_ALLOCATION,
          { kind: SpanKind.INTERNAL, attributes: recordAttributes(carried, own) },
          parent,
        )
        .end();
    } catch (error) {
      reporter.warnOnce('allocation-span', 'writing a gym.sandbox.allocation span failed; it was dropped', error);
      return undefined;
    }
    return allocation;
  })();
}
