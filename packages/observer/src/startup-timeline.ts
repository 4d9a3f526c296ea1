// Gym's server startup timeline: contiguous stages from the time origin, the first ones Node's own
// (`performance.nodeTiming`), the rest ended by the server's marks. `report()` records them as
// points and as spans under one `gym.server.startup` span (joined to `TRACEPARENT`), with explicit
// times after the fact: telemetry is usually set up partway through startup.

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
import { createInstrument, invalidChoice, perMeter, resolveMeter, resolveTracer } from '@gym/core/internal';
import { type Attributes, context, type HrTime, type SpanContext, TraceFlags, trace } from '@opentelemetry/api';
import { checkServerName } from './in-flight.js';
import { reporter, SCOPE } from './scope.js';
import type { StartupTimeline, StartupTimelineOptions } from './types.js';

/** One contiguous slice of startup, in milliseconds of `performance.now()` (0 is the time origin). */
export type Stage = { readonly name: string; readonly start: number; readonly end: number };

/** A stage's end: a name and a `performance.now()` time. */
type Stamp = { readonly name: string; readonly at: number };

const STAGE_RULE = `a string matching ${STARTUP_STAGE_PATTERN} (1 to 64 of A-Z a-z 0-9 _ -, starting with a letter)`;
const stageHistogram = perMeter((meter) => createInstrument(meter, INSTRUMENTS.serverStartupStageDuration));

/**
 * The contiguous stages of Node's stamps and the server's marks up to `now`, by time, at most
 * {@link MAX_STARTUP_STAGES}. A stamp not in (0, now] (Node's `-1` before the loop) is ignored.
 */
export function stagesOf(
  node: { readonly bootstrapComplete: number; readonly loopStart: number },
  marks: readonly Stamp[],
  now: number,
): Stage[] {
  const stamps = [
    { name: STARTUP_STAGE_NODE_BOOTSTRAP, at: node.bootstrapComplete },
    { name: STARTUP_STAGE_LOOP_START, at: node.loopStart },
    ...marks,
  ].filter(({ at }) => at > 0 && at <= now);
  stamps.sort((a, b) => a.at - b.at); // stable: marks made at the same instant keep their order
  return stamps
    .slice(0, MAX_STARTUP_STAGES)
    .map(({ name, at }, i, all) => ({ name, start: all[i - 1]?.at ?? 0, end: at }));
}

/** Wall-clock `HrTime` of a `performance.now()` time; the same input always gives the same output. */
export function hrTimeOf(at: number, origin: number = performance.timeOrigin): HrTime {
  // Whole seconds and the rest apart: their sum in milliseconds would lose sub-microsecond digits.
  const nanos = Math.round((origin % 1000) * 1e6) + Math.round((at % 1000) * 1e6);
  return [Math.trunc(origin / 1000) + Math.trunc(at / 1000) + Math.trunc(nanos / 1e9), nanos % 1e9];
}

/** version-traceid-parentid-flags, lowercase hex; a future version may append `-…` fields. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[^\s]*)?$/;

/** The remote span context of a valid W3C `traceparent` (level 1), else `undefined`. */
export function parseTraceparent(value: string | undefined): SpanContext | undefined {
  // Longer than any traceparent worth reading (55 characters in version 00).
  if (value === undefined || value.length > 512) return undefined;
  const [, version, traceId = '', spanId = '', flags = '', rest] = TRACEPARENT.exec(value) ?? [];
  if (version === undefined || version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  // Only the sampled bit is defined; other bits are not carried over.
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED, isRemote: true };
}

/**
 * A startup timeline for this server process. A bad `serverName` or stage name throws a
 * `RangeError` at once; telemetry trouble never throws.
 */
export function startupTimeline(options: StartupTimelineOptions): StartupTimeline {
  const serverName = checkServerName('startupTimeline: options.serverName', options.serverName);
  const marks: Stamp[] = [];
  let reported = false;
  return Object.freeze({
    mark(stage: string): void {
      if (!STARTUP_STAGE_PATTERN.test(stage)) throw invalidChoice('startupTimeline: mark(stage)', stage, STAGE_RULE);
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
        recordStages(serverName, stages, options);
        spanStages(serverName, stages, options);
      } catch (error) {
        reporter.warnOnce('startup-report', 'reporting the startup timeline failed; it is not reported', error);
      }
    },
  });
}

const stageAttributes = (serverName: string, stage: Stage): Attributes => ({
  [ATTR_SERVER_NAME]: serverName,
  [ATTR_STARTUP_STAGE]: stage.name,
});

function recordStages(serverName: string, stages: readonly Stage[], options: StartupTimelineOptions): void {
  try {
    const meter = resolveMeter(options, SCOPE, reporter);
    if (meter === undefined) return;
    const histogram = stageHistogram(meter);
    for (const stage of stages) {
      histogram.record(stage.end - stage.start, stageAttributes(serverName, stage));
    }
  } catch (error) {
    reporter.warnOnce('startup-metric', 'recording the startup stages failed; their spans are still tried', error);
  }
}

function spanStages(serverName: string, stages: readonly Stage[], options: StartupTimelineOptions): void {
  // An injected provider writes whatever the span groups (the caller said where).
  if (options.tracerProvider == null && (!isTracesExporting() || !currentSpanGroups().has('startup'))) return;
  const tracer = resolveTracer(options, SCOPE, reporter);
  if (tracer === undefined) return;
  const remote = parseTraceparent(process.env[ENV_TRACEPARENT]);
  const parent = remote === undefined ? context.active() : trace.setSpanContext(context.active(), remote);
  const startTime = hrTimeOf((stages[0] as Stage).start);
  const attributes = { [ATTR_SERVER_NAME]: serverName, [ATTR_PROCESS_PID]: process.pid };
  const root = tracer.startSpan(SPAN_SERVER_STARTUP, { startTime, attributes }, parent);
  try {
    const inRoot = trace.setSpan(context.active(), root);
    for (const stage of stages) {
      const start = { startTime: hrTimeOf(stage.start), attributes: stageAttributes(serverName, stage) };
      tracer.startSpan(`${SPAN_SERVER_STARTUP}.${stage.name}`, start, inRoot).end(hrTimeOf(stage.end));
    }
  } finally {
    root.end(hrTimeOf((stages.at(-1) as Stage).end));
  }
}
