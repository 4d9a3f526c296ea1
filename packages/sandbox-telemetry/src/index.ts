export { createProcessResourceProvider } from './process-provider.js';
export { allocationAttributes, recordAllocation, recordRequest, requestedAttributes } from './records.js';
export { ResourceSampler, samplingInterval } from './resource-sampler.js';
export { SandboxLifecycle } from './sandbox-lifecycle.js';
export type * from './types.js';
