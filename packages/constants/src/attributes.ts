// Every attribute key. A key's constant is `ATTR_` and the key's segments after its namespace
// (`nemo.gym.resources.`, else `nemo.gym.`, else `nemo.`), in upper snake case; a key prefix's
// ends in `_PREFIX`. Metric attributes have bounded values; ids (request, rollout, sandbox) may
// appear on spans only.

export const ATTR_OPERATION = 'nemo.gym.resources.operation' as const;
/** Deliberately not nested under `…operation.`: Gym's name. */
export const ATTR_EXECUTOR = 'nemo.gym.resources.executor' as const;
export const ATTR_OPERATION_OUTCOME = 'nemo.gym.resources.operation.outcome' as const;

// The resource attributes, in contract order.
export const ATTR_VERSION = 'nemo.gym.version' as const;
export const ATTR_SERVER_NAME = 'nemo.gym.server.name' as const;
export const ATTR_SERVER_TYPE = 'nemo.gym.server.type' as const;
export const ATTR_SERVICE_GROUP = 'nemo.gym.service_group' as const;
export const ATTR_RUN_ID = 'nemo.run.id' as const;

export const ATTR_CONCURRENCY_COMPONENT = 'nemo.gym.concurrency.component' as const;
export const ATTR_CONCURRENCY_LIMIT_NAME = 'nemo.gym.concurrency.limit_name' as const;
// As Gym's Python servers record them for aiohttp.
export const ATTR_HTTP_DESTINATION_SERVER_NAME = 'nemo.gym.http.destination.server.name' as const;
export const ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT = 'nemo.gym.http.connection_pool.queue_constraint' as const;
export const ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME = 'nemo.gym.http.connection_pool.queue_outcome' as const;

export const ATTR_STARTUP_STAGE = 'nemo.gym.startup.stage' as const;
/** A span attribute of the server startup span only, never a metric attribute. */
export const ATTR_PROCESS_PID = 'process.pid' as const;
// OpenTelemetry's own keys of the process.* and v8js.* metrics.
export const ATTR_CPU_MODE = 'cpu.mode' as const;
export const ATTR_V8JS_GC_TYPE = 'v8js.gc.type' as const;

/** The one metric attribute of the sandbox lifecycle metrics: a sandbox id would make every series unique. */
export const ATTR_SANDBOX_PROVIDER = 'nemo.gym.sandbox.provider' as const;
/** Prefix of every sandbox span attribute key; the per-sandbox records are spans, where ids may appear. */
export const ATTR_SANDBOX_PREFIX = 'nemo.gym.sandbox.' as const;
export const ATTR_SANDBOX_REQUEST_ID = `${ATTR_SANDBOX_PREFIX}request.id` as const;
export const ATTR_SANDBOX_ID = `${ATTR_SANDBOX_PREFIX}id` as const;
/** Key prefix of the requested shape (`…requested.cpu`, `…requested.unspecified`, …). */
export const ATTR_SANDBOX_REQUESTED_PREFIX = `${ATTR_SANDBOX_PREFIX}requested.` as const;
/** Key prefix of the allocation (`…allocation.source`, `…allocation.component.<name>.limits.cpu`, …). */
export const ATTR_SANDBOX_ALLOCATION_PREFIX = `${ATTR_SANDBOX_PREFIX}allocation.` as const;
/** Key prefix of the resource samples, the final flag and the sampler counters. */
export const ATTR_SANDBOX_RESOURCE_PREFIX = `${ATTR_SANDBOX_PREFIX}resource.` as const;
export const ATTR_SANDBOX_RESOURCE_FINAL = `${ATTR_SANDBOX_RESOURCE_PREFIX}final` as const;
export const ATTR_SANDBOX_RESOURCE_SAMPLER_ERRORS = `${ATTR_SANDBOX_RESOURCE_PREFIX}sampler.errors` as const;
export const ATTR_SANDBOX_RESOURCE_SAMPLER_DROPPED = `${ATTR_SANDBOX_RESOURCE_PREFIX}sampler.dropped` as const;
export const ATTR_SANDBOX_RESOURCE_SAMPLER_SKIPPED = `${ATTR_SANDBOX_RESOURCE_PREFIX}sampler.skipped` as const;
export const ATTR_SANDBOX_RESOURCE_CPU = `${ATTR_SANDBOX_RESOURCE_PREFIX}cpu` as const;
export const ATTR_SANDBOX_RESOURCE_CPU_SECONDS = `${ATTR_SANDBOX_RESOURCE_PREFIX}cpu_seconds` as const;
export const ATTR_SANDBOX_RESOURCE_MEMORY_MIB = `${ATTR_SANDBOX_RESOURCE_PREFIX}memory_mib` as const;
export const ATTR_SANDBOX_RESOURCE_MEMORY_PEAK_MIB = `${ATTR_SANDBOX_RESOURCE_PREFIX}memory_peak_mib` as const;
