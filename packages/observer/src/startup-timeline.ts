// Gym's server startup timeline. A server marks the end of each stage of its startup
// (`mark('loadVerifier')`, `mark('listen')`); Node's own clock gives the first stages
// (`performance.nodeTiming`: from the process's time origin to the end of Node's bootstrap,
// then to the start of the event loop). `report()`, once the server serves, records one
// `gym.server.startup_stage_duration_ms` point per stage and, under the `startup` span group,
// the stages as spans under one `gym.server.startup` span that covers them exactly, joined to
// the trace named by `TRACEPARENT` in the environment (the orchestrator's span for this server).
//
// Stages are contiguous: each one begins where the previous one ended, the first at the time
// origin, so they sum to the whole. Spans are written after the fact with explicit times,
// because telemetry is usually set up partway through startup: a mark costs one clock read and
// one array entry, and nothing is decided until `report()`. With nothing exporting then (and
// nothing injected), `report()` records nothing.

import {
  ATTR_PROCESS_PID,
  ATTR_SERVER_NAME,
  ATTR_STARTUP_STAGE,
  ENV_TRACEPARENT,
  INSTRUMENTS,
  MAX_STARTUP_STAGES,
  SPAN_SERVER_STARTUP,
  STARTUP_STAGE_LOOP_START,
  STARTUP_STAGE_NODE_BOOTSTRAP,
  STARTUP_STAGE_PATTERN,
} from '@gym/constants';
import { currentSpanGroups, isTracesExporting } from '@gym/core';
import {
  createInstrument,
  invalidChoice,
  type MeterSourceOptions,
  perMeter,
  resolveMeter,
  resolveTracer,
  type TracerSourceOptions,
} from '@gym/core/internal';
import {
  type Attributes,
  type Context,
  context,
  type Histogram,
  type HrTime,
  type Meter,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { reporter, SCOPE } from './scope.js';
import { parseTraceparent } from './traceparent.js';
import type { StartupTimeline, StartupTimelineOptions } from './types.js';
import { serverNameOf } from './validate.js';

/** One contiguous slice of startup, in milliseconds of `performance.now()` (0 is the time origin). */
export interface Stage {
  readonly name: string;
  readonly start: number;
  readonly end: number;
}

/** A stage's end as recorded: a name and a `performance.now()` time. */
interface Stamp {
  readonly name: string;
  readonly at: unknown;
}

/** The part of `performance.nodeTiming` the timeline reads. */
export interface NodeStamps {
  readonly bootstrapComplete?: unknown;
  readonly loopStart?: unknown;
}

/** `gym.server.startup_stage_duration_ms` of `meter`, created once. May throw (a broken meter): callers catch. */
const stageHistogram: (meter: Meter) => Histogram = perMeter((meter) =>
  createInstrument(meter, INSTRUMENTS.serverStartupStageDuration),
);

/**
 * The contiguous stages of Node's stamps and the server's marks, up to `now`: ordered by time,
 * the first from the time origin (0), each from the previous stamp to its own. A stamp that is
 * not a finite time after the origin and not later than `now` (Node's `-1` before the loop
 * started, a garbage value) is ignored. At most {@link MAX_STARTUP_STAGES}.
 */
export function stagesOf(node: NodeStamps | undefined, marks: readonly Stamp[], now: number): Stage[] {
  const stamps: Array<{ name: string; at: number }> = [];
  const add = (name: string, at: unknown): void => {
    if (typeof at === 'number' && Number.isFinite(at) && at > 0 && at <= now) stamps.push({ name, at });
  };
  add(STARTUP_STAGE_NODE_BOOTSTRAP, node?.bootstrapComplete);
  add(STARTUP_STAGE_LOOP_START, node?.loopStart);
  for (const mark of marks) add(mark.name, mark.at);
  // Stable: marks made at the same instant keep their order.
  stamps.sort((a, b) => a.at - b.at);
  const stages: Stage[] = [];
  let cursor = 0;
  for (const { name, at } of stamps.slice(0, MAX_STARTUP_STAGES)) {
    stages.push({ name, start: cursor, end: at });
    cursor = at;
  }
  return stages;
}

/** Wall-clock `HrTime` of a `performance.now()` time; the same input always gives the same output. */
export function hrTimeOf(at: number, origin: number = performance.timeOrigin): HrTime {
  const originSeconds = Math.trunc(origin / 1000);
  const originNanos = Math.round((origin - originSeconds * 1000) * 1e6);
  const atSeconds = Math.trunc(at / 1000);
  let nanos = originNanos + Math.round((at - atSeconds * 1000) * 1e6);
  let seconds = originSeconds + atSeconds;
  if (nanos >= 1e9) {
    seconds += Math.trunc(nanos / 1e9);
    nanos %= 1e9;
  }
  return [seconds, nanos];
}

/**
 * A startup timeline for this server process: `mark(stage)` ends the current stage and names it;
 * `report()` records every stage once. A bad `serverName`, stage name or option throws a
 * `RangeError` at once; telemetry trouble never throws.
 */
export function startupTimeline(options: StartupTimelineOptions): StartupTimeline {
  const serverName = serverNameOf('startupTimeline: options.serverName', options.serverName);
  const meters: MeterSourceOptions = options;
  const tracers: TracerSourceOptions = options;
  if (serverName === undefined) {
    throw invalidChoice('startupTimeline: options.serverName', serverName, 'a server name (required)');
  }
  const name = serverName;
  const marks: Stamp[] = [];
  let reported = false;
  return Object.freeze({
    mark(stage: string): void {
      if (typeof stage !== 'string' || !STARTUP_STAGE_PATTERN.test(stage)) {
        throw invalidChoice(
          'startupTimeline: mark(stage)',
          stage,
          `a string matching ${STARTUP_STAGE_PATTERN} (1 to 64 of A-Z a-z 0-9 _ -, starting with a letter)`,
        );
      }
      if (reported) return;
      if (marks.length >= MAX_STARTUP_STAGES) {
        reporter.warnOnce('startup-marks', `more than ${MAX_STARTUP_STAGES} startup marks; later ones are ignored`);
        return;
      }
      marks.push({ name: stage, at: performance.now() });
    },
    report(): void {
      if (reported) return;
      reported = true;
      try {
        const stages = stagesOf(performance.nodeTiming, marks, performance.now());
        if (stages.length === 0) return;
        recordStages(name, stages, meters);
        spanStages(name, stages, tracers);
      } catch (error) {
        reporter.warnOnce('startup-report', 'reporting the startup timeline failed; it is not reported', error);
      }
    },
  });
}

function recordStages(serverName: string, stages: readonly Stage[], source: MeterSourceOptions): void {
  try {
    const meter = resolveMeter(source, SCOPE, reporter);
    if (meter === undefined) return;
    const histogram = stageHistogram(meter);
    for (const stage of stages) {
      histogram.record(stage.end - stage.start, {
        [ATTR_SERVER_NAME]: serverName,
        [ATTR_STARTUP_STAGE]: stage.name,
      });
    }
  } catch (error) {
    reporter.warnOnce('startup-metric', 'recording the startup stages failed; their spans are still tried', error);
  }
}

/**
 * The tracer for the stage spans: an injected provider's, whatever the span groups (the
 * caller said where); else the global one while traces export and the `startup` group is on.
 */
function startupTracer(source: TracerSourceOptions): Tracer | undefined {
  const injected = source.tracerProvider != null;
  if (!injected && (!isTracesExporting() || !currentSpanGroups().has('startup'))) return undefined;
  return resolveTracer(source, SCOPE, reporter);
}

/** The parent of the server span: the span in `TRACEPARENT`, when valid, in the active context. */
function parentOf(): Context {
  const active = context.active();
  const remote = parseTraceparent(process.env[ENV_TRACEPARENT]);
  return remote === undefined ? active : trace.setSpanContext(active, remote);
}

function spanStages(serverName: string, stages: readonly Stage[], source: TracerSourceOptions): void {
  const tracer = startupTracer(source);
  if (tracer === undefined) return;
  const first = stages[0] as Stage;
  const last = stages[stages.length - 1] as Stage;
  const base: Attributes = { [ATTR_SERVER_NAME]: serverName };
  const root = tracer.startSpan(
    SPAN_SERVER_STARTUP,
    { startTime: hrTimeOf(first.start), attributes: { ...base, [ATTR_PROCESS_PID]: process.pid } },
    parentOf(),
  );
  try {
    const inRoot = trace.setSpan(context.active(), root);
    for (const stage of stages) {
      tracer
        .startSpan(
          `${SPAN_SERVER_STARTUP}.${stage.name}`,
          { startTime: hrTimeOf(stage.start), attributes: { ...base, [ATTR_STARTUP_STAGE]: stage.name } },
          inRoot,
        )
        .end(hrTimeOf(stage.end));
    }
  } finally {
    root.end(hrTimeOf(last.end));
  }
}
