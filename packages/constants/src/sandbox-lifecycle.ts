// Sandbox names, in one place: the lifecycle metrics (Gym main's names, each by the sandbox
// provider and nothing else: a sandbox id would make every series unique) and the span names
// and attribute keys of the per-sandbox records, which are spans, where ids may appear.

import { SANDBOX_ATTRIBUTE_PREFIX } from './attributes.js';

/** Metric attribute: the sandbox provider, matching {@link SANDBOX_PROVIDER_PATTERN}. */
export const ATTR_SANDBOX_PROVIDER = 'nemo.gym.sandbox.provider' as const;
/** What a provider name must look like (bounded, never an id). */
export const SANDBOX_PROVIDER_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/;

/** Up-down counter (`{sandbox}`): sandboxes held right now. */
export const METRIC_SANDBOX_ACTIVE = 'gym.sandbox.active' as const;
/** Histogram (ms, SANDBOX_DURATION_BOUNDARIES_MS): time to create a sandbox. */
export const METRIC_SANDBOX_STARTUP_DURATION = 'gym.sandbox.startup_duration_ms' as const;
/** Histogram (ms, SANDBOX_DURATION_BOUNDARIES_MS): one exec inside a sandbox. */
export const METRIC_SANDBOX_EXEC_DURATION = 'gym.sandbox.exec_duration_ms' as const;
/** Histogram (ms, SANDBOX_DURATION_BOUNDARIES_MS): one upload into or download out of a sandbox. */
export const METRIC_SANDBOX_TRANSFER_DURATION = 'gym.sandbox.transfer_duration_ms' as const;
/** Counter (`1`): create attempts retried. */
export const METRIC_SANDBOX_CREATE_RETRY = 'gym.sandbox.create_retry_total' as const;
/** Unit of {@link METRIC_SANDBOX_ACTIVE}. */
export const UNIT_SANDBOX = '{sandbox}' as const;

/** Span written once per request, at once (so a request whose provisioning fails is still counted). */
export const SPAN_SANDBOX_REQUEST = 'gym.sandbox.request' as const;
/** Span written once per sandbox by its owner: what the infrastructure gave it. */
export const SPAN_SANDBOX_ALLOCATION = 'gym.sandbox.allocation' as const;
/** Span written per sampler tick, and once more (with `…resource.final = true`) at stop. */
export const SPAN_SANDBOX_RESOURCE_SAMPLE = 'gym.sandbox.resource.sample' as const;

/** Span attribute: a UUID minted per request, carried by every later record of that sandbox. */
export const ATTR_SANDBOX_REQUEST_ID = `${SANDBOX_ATTRIBUTE_PREFIX}request.id` as const;
/** Span attribute: the provider's sandbox id, on allocation and sample records (never a metric). */
export const ATTR_SANDBOX_ID = `${SANDBOX_ATTRIBUTE_PREFIX}id` as const;
/** Span attribute: `true` on the one last sample record a sampler writes at stop. */
export const ATTR_SANDBOX_RESOURCE_FINAL = `${SANDBOX_ATTRIBUTE_PREFIX}resource.final` as const;
/** Span attribute, on the final record: provider calls that failed during the sampler's life. */
export const ATTR_SANDBOX_SAMPLER_ERRORS = `${SANDBOX_ATTRIBUTE_PREFIX}resource.sampler.errors` as const;
/** Span attribute, on the final record: single sample values dropped as malformed. */
export const ATTR_SANDBOX_SAMPLER_DROPPED = `${SANDBOX_ATTRIBUTE_PREFIX}resource.sampler.dropped` as const;
/** Span attribute, on the final record: ticks skipped because the previous sample was still running. */
export const ATTR_SANDBOX_SAMPLER_SKIPPED = `${SANDBOX_ATTRIBUTE_PREFIX}resource.sampler.skipped` as const;
/** Span attribute (process provider): CPU cores in use since the previous sample (absent on the first). */
export const ATTR_SANDBOX_RESOURCE_CPU = `${SANDBOX_ATTRIBUTE_PREFIX}resource.cpu` as const;
/** Span attribute (process provider): cumulative user + system CPU seconds. */
export const ATTR_SANDBOX_RESOURCE_CPU_SECONDS = `${SANDBOX_ATTRIBUTE_PREFIX}resource.cpu_seconds` as const;
/** Span attribute (process provider): resident memory (VmRSS), MiB. */
export const ATTR_SANDBOX_RESOURCE_MEMORY_MIB = `${SANDBOX_ATTRIBUTE_PREFIX}resource.memory_mib` as const;
/** Span attribute (process provider): peak resident memory (VmHWM), MiB. */
export const ATTR_SANDBOX_RESOURCE_MEMORY_PEAK_MIB = `${SANDBOX_ATTRIBUTE_PREFIX}resource.memory_peak_mib` as const;

/** Key prefix of the requested shape (`…requested.cpu`, `…requested.unspecified`, …). */
export const SANDBOX_REQUESTED_PREFIX = `${SANDBOX_ATTRIBUTE_PREFIX}requested.` as const;
/** Key prefix of the allocation (`…allocation.source`, `…allocation.component.<name>.limits.cpu`, …). */
export const SANDBOX_ALLOCATION_PREFIX = `${SANDBOX_ATTRIBUTE_PREFIX}allocation.` as const;
/** Key prefix of the resource samples, the final flag and the sampler counters. */
export const SANDBOX_RESOURCE_PREFIX = `${SANDBOX_ATTRIBUTE_PREFIX}resource.` as const;
