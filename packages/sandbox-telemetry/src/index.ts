export {
  ALLOCATION_PREFIX,
  ATTR_RESOURCE_CPU,
  ATTR_RESOURCE_CPU_SECONDS,
  ATTR_RESOURCE_FINAL,
  ATTR_RESOURCE_MEMORY_MIB,
  ATTR_RESOURCE_MEMORY_PEAK_MIB,
  ATTR_SAMPLER_DROPPED,
  ATTR_SAMPLER_ERRORS,
  ATTR_SAMPLER_SKIPPED,
  ATTR_SANDBOX_ID,
  ATTR_SANDBOX_REQUEST_ID,
  PROCESS_ALLOCATION_SOURCE,
  REQUESTED_PREFIX,
  RESOURCE_PREFIX,
  SPAN_SANDBOX_ALLOCATION,
  SPAN_SANDBOX_REQUEST,
  SPAN_SANDBOX_RESOURCE_SAMPLE,
} from './attribute-keys.js';
export { MAX_CALLER_ATTRIBUTES, MAX_CALLER_VALUE_LENGTH } from './carried-attributes.js';
export type { InputProblem } from './input-error.js';
export { SandboxInputError } from './input-error.js';
export {
  recordSandboxActive,
  recordSandboxCreateRetry,
  recordSandboxExecDuration,
  recordSandboxStartup,
} from './lifecycle-recorders.js';
export { createProcessResourceProvider } from './process-provider.js';
export { recordAllocation } from './record-allocation.js';
export { recordRequest } from './record-request.js';
export { TRACER_NAME } from './report.js';
export { allocationAttributes, amountAttributes, requestedAttributes } from './resource-attributes.js';
export { DEFAULT_STOP_TIMEOUT_SECONDS, ResourceSampler } from './resource-sampler.js';
export { samplingInterval } from './sampling-interval.js';
export { SandboxLifecycle } from './sandbox-lifecycle.js';
export {
  checkProcessSandboxHandle,
  checkSandboxHandle,
  componentAllocationSchema,
  NAME_PATTERN,
  parseResourceAllocation,
  parseSandboxResourceAmounts,
  parseSandboxSpec,
  processSandboxHandleSchema,
  resourceAllocationSchema,
  resourceDesignatorSchema,
  sandboxHandleSchema,
  sandboxResourceAmountsSchema,
  sandboxSpecSchema,
} from './schemas.js';
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
  SandboxMeterOptions,
  SandboxMetricOptions,
  SandboxResourceAmounts,
  SandboxSpec,
  SandboxTelemetryOptions,
} from './types.js';
