// Bounded sets: every metric attribute value comes from one of these tuples, so a
// dashboard's series count is fixed by this file and never by traffic.

/** A guard that accepts exactly the members of `values` (nothing that merely converts to one). */
const guardOf = <T extends string>(values: readonly T[]) => {
  const members: ReadonlySet<unknown> = new Set(values);
  return (value: unknown): value is T => members.has(value);
};

/** The kinds of limited work a resources server does. */
export const OPERATIONS = ['verify', 'tool', 'judge', 'other'] as const;
export type Operation = (typeof OPERATIONS)[number];
export const isOperation = guardOf(OPERATIONS);

/** Where limited work runs. */
export const EXECUTORS = ['inline', 'thread', 'process', 'subprocess', 'other'] as const;
export type Executor = (typeof EXECUTORS)[number];
export const isExecutor = guardOf(EXECUTORS);

/** How limited work ended; per-outcome counts are read from the duration histogram. */
export const OUTCOMES = ['ok', 'error', 'timeout', 'cancelled', 'crashed'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export const isOutcome = guardOf(OUTCOMES);

/** The server types of a Gym fleet (resource attribute `nemo.gym.server.type`). */
export const SERVER_TYPES = [
  'resources_servers',
  'responses_api_agents',
  'responses_api_models',
  'orchestrator',
] as const;
export type ServerType = (typeof SERVER_TYPES)[number];
export const isServerType = guardOf(SERVER_TYPES);

/** Where a metered limit sits: ours, aligned to the places Gym limits concurrency. */
export const COMPONENTS = ['rollout_driver', 'agent', 'model', 'resources', 'sandbox', 'other'] as const;
export type Component = (typeof COMPONENTS)[number];
export const isComponent = guardOf(COMPONENTS);

/** OpenTelemetry's kinds of garbage collection. */
export const V8JS_GC_TYPES = ['major', 'minor', 'incremental', 'weakcb'] as const;
export type V8jsGcType = (typeof V8JS_GC_TYPES)[number];
