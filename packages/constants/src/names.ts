// What a name chosen in code must look like (bounded, never an id), how many there may be, and
// the fixed names of Node's own startup stages and of an unnamed HTTP destination.

/** What a limit name must look like. */
export const LIMIT_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
/** At most this many distinct limit names are exported per process; more are refused. */
export const MAX_LIMIT_NAMES = 64 as const;
/** What a server name must look like to be the `nemo.gym.server.name` attribute. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
/** What a sandbox provider name must look like. */
export const SANDBOX_PROVIDER_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/;
/** 1 to 64 of `A-Z a-z 0-9 _ -`, starting with a letter (no dots: it is also a span-name suffix). */
export const STARTUP_STAGE_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/** At most this many stages per timeline (Node's own stages included); later marks are ignored. */
export const MAX_STARTUP_STAGES = 32 as const;
/** From the process's time origin to `performance.nodeTiming.bootstrapComplete`. */
export const STARTUP_STAGE_NODE_BOOTSTRAP = 'node_bootstrap' as const;
/** Ends at `performance.nodeTiming.loopStart`. */
export const STARTUP_STAGE_LOOP_START = 'loop_start' as const;
/** The destination name of an origin the caller did not name. */
export const HTTP_DESTINATION_EXTERNAL = 'external' as const;
