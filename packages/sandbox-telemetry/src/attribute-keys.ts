// Span names and attribute keys of the sandbox records. Every key is built from
// SANDBOX_ATTRIBUTE_PREFIX of @gym/constants, so a dashboard can select the whole family
// with one prefix; the suffixes are shared with Gym's Python servers.

import { SANDBOX_ATTRIBUTE_PREFIX } from '@gym/constants';

/** Span emitted once per `recordRequest`, at once (so a request whose provisioning fails is still counted). */
export const SPAN_SANDBOX_REQUEST = 'gym.sandbox.request' as const;
/** Span emitted once per `recordAllocation` by the owner of a sandbox. */
export const SPAN_SANDBOX_ALLOCATION = 'gym.sandbox.allocation' as const;
/** Span emitted per sampler tick, and once more (with `…resource.final = true`) at stop. */
export const SPAN_SANDBOX_RESOURCE_SAMPLE = 'gym.sandbox.resource.sample' as const;

/** UUID minted by `recordRequest`; carried by every later record of that sandbox. */
export const ATTR_SANDBOX_REQUEST_ID = `${SANDBOX_ATTRIBUTE_PREFIX}request.id` as const;
/** The provider's sandbox id (`SandboxHandle.id`), on allocation and sample records. Spans only, never metrics. */
export const ATTR_SANDBOX_ID = `${SANDBOX_ATTRIBUTE_PREFIX}id` as const;
/** `true` on the one last sample record a sampler writes at stop. */
export const ATTR_RESOURCE_FINAL = `${SANDBOX_ATTRIBUTE_PREFIX}resource.final` as const;
/** On the final record: provider calls that failed during the sampler's life. */
export const ATTR_SAMPLER_ERRORS = `${SANDBOX_ATTRIBUTE_PREFIX}resource.sampler.errors` as const;
/** On the final record: single sample values dropped as malformed during the sampler's life. */
export const ATTR_SAMPLER_DROPPED = `${SANDBOX_ATTRIBUTE_PREFIX}resource.sampler.dropped` as const;
/** On the final record: ticks skipped because the previous sample was still running. */
export const ATTR_SAMPLER_SKIPPED = `${SANDBOX_ATTRIBUTE_PREFIX}resource.sampler.skipped` as const;

/** Prefix of the requested shape (`requestedAttributes`). */
export const REQUESTED_PREFIX = `${SANDBOX_ATTRIBUTE_PREFIX}requested.` as const;
/** Prefix of every allocation key (`allocationAttributes`). */
export const ALLOCATION_PREFIX = `${SANDBOX_ATTRIBUTE_PREFIX}allocation.` as const;
/** Prefix of the resource sample family (samples, final flag, sampler counters). */
export const RESOURCE_PREFIX = `${SANDBOX_ATTRIBUTE_PREFIX}resource.` as const;

/** Process provider sample: CPU cores in use, averaged since the previous sample of the same handle (absent on the first). */
export const ATTR_RESOURCE_CPU = `${RESOURCE_PREFIX}cpu` as const;
/** Process provider sample: cumulative user + system CPU seconds of the process. */
export const ATTR_RESOURCE_CPU_SECONDS = `${RESOURCE_PREFIX}cpu_seconds` as const;
/** Process provider sample: resident memory (VmRSS) in MiB. */
export const ATTR_RESOURCE_MEMORY_MIB = `${RESOURCE_PREFIX}memory_mib` as const;
/** Process provider sample: peak resident memory (VmHWM) in MiB. */
export const ATTR_RESOURCE_MEMORY_PEAK_MIB = `${RESOURCE_PREFIX}memory_peak_mib` as const;

/** The allocation source reported by `createProcessResourceProvider`. */
export const PROCESS_ALLOCATION_SOURCE = 'local-process' as const;
