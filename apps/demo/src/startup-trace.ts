// The orchestrator's half of Gym's startup timeline: one `gym.startup` span over the fleet's
// startup, from the orchestrator's time origin to its last stage, with its own stages under it
// (`gym.startup.<stage>`, contiguous: each ends at a mark) and one `gym.startup.server` span per
// server from its spawn to its ready message. Each server gets the W3C `traceparent` of its
// `gym.startup.server` span in `TRACEPARENT`, so the server's own `gym.server.startup` span
// (`startupTimeline` of @gym/observer) joins this trace. Only the first launch of each server
// is part of startup: restarts after `finish()` open no span.
//
// Spans carry explicit times (performance time since the process's time origin, as wall-clock
// milliseconds), like the server's: telemetry is set up partway through startup.

import {
  ATTR_SERVER_NAME,
  ATTR_SERVER_TYPE,
  ENV_TRACEPARENT,
  SPAN_STARTUP,
  SPAN_STARTUP_SERVER,
  STARTUP_STAGE_PATTERN,
} from '@gym/constants';
import { currentSpanGroups, isTracesExporting } from '@gym/core';
import { context, type Span, type Tracer, trace } from '@opentelemetry/api';

/** Wall-clock milliseconds of a `performance.now()` time. */
const wallClock = (at: number): number => performance.timeOrigin + at;

/** What the fleet gets for one server it spawns. */
export interface SpawnTrace {
  /** Variables to add to the server's environment (its `TRACEPARENT`). */
  readonly env: Readonly<Record<string, string>>;
  /** The server reported ready (`true`) or never did (`false`); ends its span. Later calls do nothing. */
  end(ready: boolean): void;
}

const UNTRACED: SpawnTrace = Object.freeze({ env: Object.freeze({}), end() {} });

/** The orchestrator's tracer for startup spans: while traces export and the `startup` span group is on. */
export function startupTracer(): Tracer | undefined {
  return isTracesExporting() && currentSpanGroups().has('startup') ? trace.getTracer('@gym/demo') : undefined;
}

/** The W3C traceparent of `span`. */
function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The fleet's startup as spans. With no tracer, every method does nothing. */
export class OrchestratorStartup {
  readonly #tracer: Tracer | undefined;
  readonly #root: Span | undefined;
  readonly #stages: Array<{ name: string; start: number; end: number }> = [];
  #cursor = 0;
  #finished = false;

  /** Opens `gym.startup` at the process's time origin, when `tracer` is given. */
  constructor(tracer: Tracer | undefined) {
    this.#tracer = tracer;
    this.#root = tracer?.startSpan(SPAN_STARTUP, { startTime: wallClock(0) }, context.active());
  }

  /** Ends the current stage of the orchestrator now and names it. */
  mark(stage: string): void {
    if (this.#root === undefined || this.#finished || !STARTUP_STAGE_PATTERN.test(stage)) return;
    const now = performance.now();
    this.#stages.push({ name: stage, start: this.#cursor, end: now });
    this.#cursor = now;
  }

  /** Opens `gym.startup.server` for a server spawned now; its traceparent goes in the server's environment. */
  spawned(serverName: string): SpawnTrace {
    if (this.#tracer === undefined || this.#root === undefined || this.#finished) return UNTRACED;
    const span = this.#tracer.startSpan(
      SPAN_STARTUP_SERVER,
      {
        startTime: wallClock(performance.now()),
        attributes: { [ATTR_SERVER_NAME]: serverName, [ATTR_SERVER_TYPE]: 'resources_servers' },
      },
      trace.setSpan(context.active(), this.#root),
    );
    let open = true;
    return {
      env: { [ENV_TRACEPARENT]: traceparentOf(span) },
      end(ready) {
        if (!open) return;
        open = false;
        if (!ready) span.setStatus({ code: 2, message: 'the server did not report ready' });
        span.end(wallClock(performance.now()));
      },
    };
  }

  /** Writes the orchestrator's stage spans and closes `gym.startup` at the last mark. Idempotent. */
  finish(): void {
    if (this.#tracer === undefined || this.#root === undefined || this.#finished) return;
    this.#finished = true;
    const inRoot = trace.setSpan(context.active(), this.#root);
    for (const stage of this.#stages) {
      this.#tracer
        .startSpan(`${SPAN_STARTUP}.${stage.name}`, { startTime: wallClock(stage.start) }, inRoot)
        .end(wallClock(stage.end));
    }
    this.#root.end(wallClock(this.#cursor));
  }
}
