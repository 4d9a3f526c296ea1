// Sandbox names, in one place: the lifecycle metrics (Gym main's names, each by the sandbox
// provider and nothing else: a sandbox id would make every series unique) and the span names
// and attribute keys of the per-sandbox records, which are spans, where ids may appear.

import { SANDBOX_ATTRIBUTE_PREFIX } from './attributes.js';

export const ATTR_SANDBOX_PROVIDER = 'nemo.gym.sandbox.provider' as const;
/** What a provider name must look like (bounded, never an id). */
export const SANDBOX_PROVIDER_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/;

export const METRIC_SANDBOX_ACTIVE = 'gym.sandbox.active' as const;
export const METRIC_SANDBOX_STARTUP_DURATION = 'gym.sandbox.startup_duration_ms' as const;
export const METRIC_SANDBOX_EXEC_DURATION = 'gym.sandbox.exec_duration_ms' as const;
export const METRIC_SANDBOX_TRANSFER_DURATION = 'gym.sandbox.transfer_duration_ms' as const;
export const METRIC_SANDBOX_CREATE_RETRY = 'gym.sandbox.create_retry_total' as const;

export const SPAN_SANDBOX_REQUEST = 'gym.sandbox.request' as const;
/** Gym 0.7.0's lifecycle spans (its `AsyncSandbox`): one provider create, one command, one close. */
export const SPAN_SANDBOX_START = 'gym.sandbox.start' as const;
export const SPAN_SANDBOX_EXEC = 'gym.sandbox.exec' as const;
export const SPAN_SANDBOX_STOP = 'gym.sandbox.stop' as const;
export const SPAN_SANDBOX_ALLOCATION = 'gym.sandbox.allocation' as const;
export const SPAN_SANDBOX_RESOURCE_SAMPLE = 'gym.sandbox.resource.sample' as const;

export const ATTR_SANDBOX_REQUEST_ID = `${SANDBOX_ATTRIBUTE_PREFIX}request.id` as const;
export const ATTR_SANDBOX_ID = `${SANDBOX_ATTRIBUTE_PREFIX}id` as const;
export const ATTR_SANDBOX_RESOURCE_FINAL = `${SANDBOX_ATTRIBUTE_PREFIX}resource.final` as const;
export const ATTR_SANDBOX_SAMPLER_ERRORS = `${SANDBOX_ATTRIBUTE_PREFIX}resource.sampler.errors` as const;
export const ATTR_SANDBOX_SAMPLER_DROPPED = `${SANDBOX_ATTRIBUTE_PREFIX}resource.sampler.dropped` as const;
export const ATTR_SANDBOX_SAMPLER_SKIPPED = `${SANDBOX_ATTRIBUTE_PREFIX}resource.sampler.skipped` as const;
export const ATTR_SANDBOX_RESOURCE_CPU = `${SANDBOX_ATTRIBUTE_PREFIX}resource.cpu` as const;
export const ATTR_SANDBOX_RESOURCE_CPU_SECONDS = `${SANDBOX_ATTRIBUTE_PREFIX}resource.cpu_seconds` as const;
export const ATTR_SANDBOX_RESOURCE_MEMORY_MIB = `${SANDBOX_ATTRIBUTE_PREFIX}resource.memory_mib` as const;
export const ATTR_SANDBOX_RESOURCE_MEMORY_PEAK_MIB = `${SANDBOX_ATTRIBUTE_PREFIX}resource.memory_peak_mib` as const;

/** Key prefix of the requested shape (`…requested.cpu`, `…requested.unspecified`, …). */
export const SANDBOX_REQUESTED_PREFIX = `${SANDBOX_ATTRIBUTE_PREFIX}requested.` as const;
/** Key prefix of the allocation (`…allocation.source`, `…allocation.component.<name>.limits.cpu`, …). */
export const SANDBOX_ALLOCATION_PREFIX = `${SANDBOX_ATTRIBUTE_PREFIX}allocation.` as const;
/** Key prefix of the resource samples, the final flag and the sampler counters. */
export const SANDBOX_RESOURCE_PREFIX = `${SANDBOX_ATTRIBUTE_PREFIX}resource.` as const;
