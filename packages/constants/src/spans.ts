// Span names, Gym's own. The startup spans (span group `startup`) join the supervisor's trace
// through `TRACEPARENT` (`nemo_gym/telemetry/startup.py`).

/** Gym's span around one verify call (span group `verify`), with `nemo.gym.server.name`. */
export const SPAN_VERIFY = 'gym.verify' as const;

export const SPAN_SANDBOX_REQUEST = 'gym.sandbox.request' as const;
/** Gym 0.7.0's lifecycle spans (its `AsyncSandbox`): one provider create, one command, one close. */
export const SPAN_SANDBOX_START = 'gym.sandbox.start' as const;
export const SPAN_SANDBOX_EXEC = 'gym.sandbox.exec' as const;
export const SPAN_SANDBOX_STOP = 'gym.sandbox.stop' as const;
export const SPAN_SANDBOX_ALLOCATION = 'gym.sandbox.allocation' as const;
export const SPAN_SANDBOX_RESOURCE_SAMPLE = 'gym.sandbox.resource.sample' as const;

/** The server's span: covers its stages exactly; its parent is the trace in `TRACEPARENT`, when valid. */
export const SPAN_SERVER_STARTUP = 'gym.server.startup' as const;
/** The supervisor's span over the whole fleet startup; its own stages are `gym.startup.<stage>`. */
export const SPAN_STARTUP = 'gym.startup' as const;
/** The supervisor's span per server, from spawn to the first answered readiness probe. */
export const SPAN_STARTUP_SERVER = 'gym.startup.server' as const;
