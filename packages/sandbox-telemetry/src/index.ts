export { createProcessResourceProvider } from './process-provider.js';
export { allocationAttributes, recordAllocation, recordRequest, requestedAttributes } from './records.js';
export { ResourceSampler, samplingInterval } from './resource-sampler.js';
export { SandboxLifecycle } from './sandbox-lifecycle.js';
export type {
  ComponentAllocation,
  ProcessResourceProvider,
  ProcessResourceProviderOptions,
  ProcessSandboxHandle,
  RecordRequestOptions,
  ResourceAllocation,
  ResourceDesignator,
  ResourceProvider,
  ResourceSamplerOptions,
  ResourceSamplerState,
  ResourceSamplerStats,
  SandboxAttributes,
  SandboxAttributeValue,
  SandboxHandle,
  SandboxLifecycleOptions,
  SandboxLifecycleState,
  SandboxResourceAmounts,
  SandboxSpec,
  SandboxTelemetryOptions,
} from './types.js';
