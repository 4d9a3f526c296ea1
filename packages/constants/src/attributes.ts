// Attribute keys. Metric attributes have bounded values; ids (request, rollout, sandbox) may
// appear on spans only.

export const ATTR_OPERATION = 'nemo.gym.resources.operation' as const;
/** Deliberately not nested under `…operation.`: Gym's name. */
export const ATTR_EXECUTOR = 'nemo.gym.resources.executor' as const;
export const ATTR_OUTCOME = 'nemo.gym.resources.operation.outcome' as const;

/** Prefix of every sandbox span attribute key. */
export const SANDBOX_ATTRIBUTE_PREFIX = 'nemo.gym.sandbox.' as const;

export const ATTR_GYM_VERSION = 'nemo.gym.version' as const;
export const ATTR_SERVER_NAME = 'nemo.gym.server.name' as const;
export const ATTR_SERVER_TYPE = 'nemo.gym.server.type' as const;
export const ATTR_SERVICE_GROUP = 'nemo.gym.service_group' as const;
export const ATTR_RUN_ID = 'nemo.run.id' as const;

/** The resource attribute keys, in contract order. */
export const RESOURCE_ATTRIBUTE_KEYS = [
  ATTR_GYM_VERSION,
  ATTR_SERVER_NAME,
  ATTR_SERVER_TYPE,
  ATTR_SERVICE_GROUP,
  ATTR_RUN_ID,
] as const;
