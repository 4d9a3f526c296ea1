export { allocationAttributes, requestedAttributes } from './attribute-writer.js';
export { createProcessResourceProvider } from './process-provider.js';
export { recordAllocation, recordRequest } from './records.js';
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
