// The startup timeline, asserted on what a real SDK exports: Gym's startup test cases ported
// (marks contiguous and covering the whole span of time, one span per stage under a server
// span, one histogram point per stage, the spans joining the supervisor's trace through the
// environment), plus the failure and off paths.

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
} from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { startupTimeline } from '@gym/observer';
import {
  captureDiag,
  createMetricHarness,
  createSpanHarness,
  type MetricHarness,
  pointsOf,
  type SpanHarness,
} from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { type HrTime, metrics, type Span, trace } from '@opentelemetry/api';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { hrTimeOf, parseTraceparent, stagesOf } from '../src/startup-timeline.js';

let meters: MetricHarness;
let spans: SpanHarness;
beforeEach(() => {
  meters = createMetricHarness();
  spans = createSpanHarness();
  delete process.env[ENV_TRACEPARENT];
});
afterEach(async () => {
  jest.restoreAllMocks();
  delete process.env[ENV_TRACEPARENT];
  setTelemetryState(undefined);
  metrics.disable();
  trace.disable();
  await meters.shutdown();
  await spans.shutdown();
});

const injected = () => ({ meterProvider: meters.meterProvider, tracerProvider: spans.tracerProvider });
const nanos = ([s, n]: HrTime) => BigInt(s) * 1_000_000_000n + BigInt(n);
const byName = () => new Map(spans.spans().map((span) => [span.name, span]));
const stagePoints = async () =>
  pointsOf<Histogram>(await meters.collect(), INSTRUMENTS.serverStartupStageDuration.name).map((p) => ({
    stage: p.attributes[ATTR_STARTUP_STAGE],
    server: p.attributes[ATTR_SERVER_NAME],
    count: p.value.count,
    keys: Object.keys(p.attributes).sort(),
  }));

/** The children of `root`, in time order. */
const childrenOf = (root: ReadableSpan) =>
  spans
    .spans()
    .filter((span) => span.parentSpanContext?.spanId === root.spanContext().spanId)
    .sort((a, b) => Number(nanos(a.startTime) - nanos(b.startTime)));

describe('stages', () => {
  it('marks are contiguous and cover the whole span of time', () => {
    const stages = stagesOf(
      { bootstrapComplete: 5, loopStart: 8 },
      [
        { name: 'load_config', at: 10 },
        { name: 'listen', at: 20 },
      ],
      30,
    );
    expect(stages).toEqual([
      { name: STARTUP_STAGE_NODE_BOOTSTRAP, start: 0, end: 5 },
      { name: STARTUP_STAGE_LOOP_START, start: 5, end: 8 },
      { name: 'load_config', start: 8, end: 10 },
      { name: 'listen', start: 10, end: 20 },
    ]);
  });

  it("a mark made before the loop started (CommonJS main module) falls in time order with Node's stamps", () => {
    expect(
      stagesOf({ bootstrapComplete: 5, loopStart: 12 }, [{ name: 'load_config', at: 7 }], 30).map((s) => s.name),
    ).toEqual([STARTUP_STAGE_NODE_BOOTSTRAP, 'load_config', STARTUP_STAGE_LOOP_START]);
  });

  it.each([
    ['NaN', Number.NaN],
    ["Node's -1 (not yet)", -1],
    ['zero', 0],
    ['infinite', Number.POSITIVE_INFINITY],
    ['in the future', 1e12],
  ])('a garbage stamp is ignored (%s)', (_what, stamp) => {
    expect(stagesOf({ bootstrapComplete: stamp, loopStart: stamp }, [{ name: 'listen', at: 20 }], 30)).toEqual([
      { name: 'listen', start: 0, end: 20 },
    ]);
  });

  it('hrTimeOf gives the same time for the same input and keeps sub-millisecond order', () => {
    const origin = 1_796_137_989_479.74;
    expect(hrTimeOf(12.3456789, origin)).toEqual(hrTimeOf(12.3456789, origin));
    expect(nanos(hrTimeOf(12.000001, origin)) - nanos(hrTimeOf(12, origin))).toBe(1n);
    const [, n] = hrTimeOf(999.9999999, origin);
    expect(n).toBeLessThan(1e9);
  });
});

describe('report', () => {
  it('one span per stage under a server span that covers them exactly', () => {
    const timeline = startupTimeline({ serverName: 'srv', ...injected() });
    timeline.mark('load_config');
    timeline.mark('init_server');
    timeline.report();

    const named = byName();
    const root = named.get(SPAN_SERVER_STARTUP)!;
    expect(root.attributes).toEqual({ [ATTR_SERVER_NAME]: 'srv', [ATTR_PROCESS_PID]: process.pid });
    const children = childrenOf(root);
    // Node's own stages first (the jest worker's loop is running), then the marks.
    expect(children.map((s) => s.name)).toEqual(
      [STARTUP_STAGE_NODE_BOOTSTRAP, STARTUP_STAGE_LOOP_START, 'load_config', 'init_server'].map(
        (stage) => `${SPAN_SERVER_STARTUP}.${stage}`,
      ),
    );
    for (const child of children) {
      const stage = child.name.slice(SPAN_SERVER_STARTUP.length + 1);
      expect(child.attributes).toEqual({ [ATTR_SERVER_NAME]: 'srv', [ATTR_STARTUP_STAGE]: stage });
      expect(child.spanContext().traceId).toBe(root.spanContext().traceId);
    }
    // The parent covers its children exactly, and the stages are contiguous.
    expect(children[0]!.startTime).toEqual(root.startTime);
    expect(children.at(-1)!.endTime).toEqual(root.endTime);
    for (let i = 1; i < children.length; i += 1) expect(children[i]!.startTime).toEqual(children[i - 1]!.endTime);
    // The first stage starts at the process's time origin.
    expect(root.startTime).toEqual(hrTimeOf(0));
    expect(spans.spans()).toHaveLength(children.length + 1);
  });

  it('one histogram point per stage, with the stage and the server name, on Gym’s buckets', async () => {
    const timeline = startupTimeline({ serverName: 'srv', ...injected() });
    timeline.mark('load_config');
    timeline.mark('init_server');
    timeline.report();

    const points = await stagePoints();
    expect(points.map((p) => p.stage).sort()).toEqual(
      ['init_server', 'load_config', STARTUP_STAGE_LOOP_START, STARTUP_STAGE_NODE_BOOTSTRAP].sort(),
    );
    for (const point of points) {
      expect(point).toMatchObject({ server: 'srv', count: 1 });
      expect(point.keys).toEqual([ATTR_SERVER_NAME, ATTR_STARTUP_STAGE].sort());
    }
    const [first] = pointsOf<Histogram>(await meters.collect(), INSTRUMENTS.serverStartupStageDuration.name);
    expect(first!.value.buckets.boundaries).toEqual([...INSTRUMENTS.serverStartupStageDuration.boundaries]);
    // The durations are the spans' durations: the stages sum to the server span.
    const sum = pointsOf<Histogram>(await meters.collect(), INSTRUMENTS.serverStartupStageDuration.name).reduce(
      (total, p) => total + (p.value.sum ?? 0),
      0,
    );
    const root = byName().get(SPAN_SERVER_STARTUP)!;
    expect(Math.abs(sum - Number(nanos(root.endTime) - nanos(root.startTime)) / 1e6)).toBeLessThan(0.01);
  });

  it('the server span joins the supervisor’s trace through TRACEPARENT in the environment', () => {
    const supervisor = spans.parent('gym.startup.server');
    const { traceId, spanId } = supervisor.span.spanContext();
    process.env[ENV_TRACEPARENT] = `00-${traceId}-${spanId}-01`;
    const timeline = startupTimeline({ serverName: 'srv', ...injected() });
    timeline.mark('load_config');
    timeline.report();
    supervisor.span.end();

    const named = byName();
    const root = named.get(SPAN_SERVER_STARTUP)!;
    expect(root.parentSpanContext?.spanId).toBe(spanId);
    expect(root.parentSpanContext?.isRemote).toBe(true);
    expect(new Set(spans.spans().map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));
    expect(named.get(`${SPAN_SERVER_STARTUP}.load_config`)!.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
  });

  it.each([
    ['upper case', (t: string, s: string) => `00-${t.toUpperCase()}-${s}-01`],
    ['version ff', (t: string, s: string) => `ff-${t}-${s}-01`],
    ['version 00 with an extra field', (t: string, s: string) => `00-${t}-${s}-01-extra`],
    ['an all-zero trace id', (_t: string, s: string) => `00-${'0'.repeat(32)}-${s}-01`],
    ['an all-zero span id', (t: string) => `00-${t}-${'0'.repeat(16)}-01`],
    ['surrounding spaces', (t: string, s: string) => ` 00-${t}-${s}-01 `],
    ['a short trace id', (t: string, s: string) => `00-${t.slice(1)}-${s}-01`],
    ['no flags', (t: string, s: string) => `00-${t}-${s}`],
    ['garbage', () => 'not-a-traceparent'],
    ['empty', () => ''],
  ])('a TRACEPARENT that is not W3C trace context is no parent (%s)', (_what, make) => {
    const supervisor = spans.parent('gym.startup.server');
    const { traceId, spanId } = supervisor.span.spanContext();
    process.env[ENV_TRACEPARENT] = make(traceId, spanId);
    const timeline = startupTimeline({ serverName: 'srv', ...injected() });
    timeline.report();
    const root = byName().get(SPAN_SERVER_STARTUP)!;
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.spanContext().traceId).not.toBe(traceId);
    supervisor.span.end();
  });

  it('a later traceparent version may carry more fields; only the sampled flag is kept', () => {
    const t = 'a'.repeat(32);
    const s = 'b'.repeat(16);
    expect(parseTraceparent(`cc-${t}-${s}-03-more`)).toEqual({ traceId: t, spanId: s, traceFlags: 1, isRemote: true });
    expect(parseTraceparent(`00-${t}-${s}-00`)?.traceFlags).toBe(0);
    expect(parseTraceparent(`00-${t}-${s}-0g`)).toBeUndefined();
    expect(parseTraceparent(`00-${t}-${s}-01${'x'.repeat(600)}`)).toBeUndefined();
  });

  it("garbage in Node's own clock is ignored: the marks alone are the stages, from the time origin", () => {
    jest.replaceProperty(performance, 'nodeTiming', {
      ...performance.nodeTiming,
      bootstrapComplete: Number.NaN,
      loopStart: -1,
    } as never);
    const timeline = startupTimeline({ serverName: 'srv', ...injected() });
    timeline.mark('load_config');
    timeline.report();
    const root = byName().get(SPAN_SERVER_STARTUP)!;
    expect(childrenOf(root).map((s) => s.name)).toEqual([`${SPAN_SERVER_STARTUP}.load_config`]);
    expect(childrenOf(root)[0]!.startTime).toEqual(hrTimeOf(0));
  });

  it('reporting twice exports once; marks after the report are ignored', async () => {
    const timeline = startupTimeline({ serverName: 'srv', ...injected() });
    timeline.mark('load_config');
    timeline.report();
    timeline.mark('late');
    timeline.report();
    expect(spans.spans(SPAN_SERVER_STARTUP)).toHaveLength(1);
    expect((await stagePoints()).every((p) => p.count === 1 && p.stage !== 'late')).toBe(true);
  });

  it(`at most ${MAX_STARTUP_STAGES} stages, the overflow reported once`, async () => {
    const warnings = captureDiag();
    try {
      const timeline = startupTimeline({ serverName: 'srv', ...injected() });
      for (let i = 0; i < MAX_STARTUP_STAGES + 5; i += 1) timeline.mark(`stage_${i}`);
      timeline.report();
      expect(await stagePoints()).toHaveLength(MAX_STARTUP_STAGES);
      expect(warnings.lines('warn').filter((l) => l.includes('startup marks'))).toHaveLength(1);
    } finally {
      warnings.stop();
    }
  });

  it('programming errors throw at once, naming the value', () => {
    expect(() => startupTimeline({ serverName: 'bad name' })).toThrow(/bad name/);
    const timeline = startupTimeline({ serverName: 'srv', ...injected() });
    for (const stage of ['', 'has.dot', 'has space', '1starts_with_digit', 'x'.repeat(65)]) {
      expect(() => timeline.mark(stage)).toThrow(RangeError);
    }
  });
});

describe('through the global providers', () => {
  const registerGlobals = (spanGroups: string[], exporting = true) => {
    metrics.setGlobalMeterProvider(meters.meterProvider);
    trace.setGlobalTracerProvider(spans.tracerProvider);
    setTelemetryState({
      metricsExporting: exporting,
      tracesExporting: exporting,
      spanGroups: spanGroups as never,
      orchestrator: false,
    });
  };

  it('with the startup group on: the metric and the spans', async () => {
    registerGlobals(['server', 'startup']);
    const timeline = startupTimeline({ serverName: 'srv' });
    timeline.mark('load_config');
    timeline.report();
    expect(spans.spans(SPAN_SERVER_STARTUP)).toHaveLength(1);
    expect((await stagePoints()).map((p) => p.stage)).toContain('load_config');
  });

  it('with the startup group off: the metric is still recorded, no span is opened', async () => {
    registerGlobals(['server', 'sandbox']);
    const timeline = startupTimeline({ serverName: 'srv' });
    timeline.mark('load_config');
    timeline.report();
    expect(spans.spans()).toEqual([]);
    expect((await stagePoints()).map((p) => p.stage)).toContain('load_config');
  });

  it('a disabled timeline (nothing exporting when it reports) records nothing', async () => {
    registerGlobals(['startup'], false);
    const timeline = startupTimeline({ serverName: 'srv' });
    timeline.mark('load_config');
    timeline.report();
    expect(spans.spans()).toEqual([]);
    expect((await meters.collect()).has(INSTRUMENTS.serverStartupStageDuration.name)).toBe(false);
  });

  it('telemetry set up after the marks (the usual order) still gets every stage', async () => {
    const timeline = startupTimeline({ serverName: 'srv' });
    timeline.mark('load_config');
    registerGlobals(['startup']);
    timeline.mark('listen');
    timeline.report();
    expect((await stagePoints()).map((p) => p.stage)).toEqual(expect.arrayContaining(['load_config', 'listen']));
  });
});

describe('a telemetry failure never reaches the server', () => {
  it('a meter and a tracer that throw on every call: report returns, each failure reported once', () => {
    const warnings = captureDiag();
    const boom = () => {
      throw new Error('exporter is gone');
    };
    const broken = new Proxy({}, { get: () => boom });
    try {
      const timeline = startupTimeline({
        serverName: 'srv',
        meterProvider: { getMeter: () => broken as never },
        tracerProvider: { getTracer: () => broken as never },
      });
      timeline.mark('load_config');
      expect(() => timeline.report()).not.toThrow();
      expect(warnings.lines('warn').filter((l) => l.includes('startup stages failed'))).toHaveLength(1);
      expect(warnings.lines('warn').filter((l) => l.includes('startup timeline failed'))).toHaveLength(1);
    } finally {
      warnings.stop();
    }
  });

  it('a child span that cannot start still ends the server span', () => {
    const warnings = captureDiag();
    const real = spans.tracerProvider.getTracer('t');
    let calls = 0;
    const flaky = {
      startSpan: (...args: Parameters<typeof real.startSpan>): Span => {
        calls += 1;
        if (calls === 2) throw new Error('no more spans');
        return real.startSpan(...args);
      },
      startActiveSpan: real.startActiveSpan.bind(real),
    };
    try {
      const timeline = startupTimeline({
        serverName: 'srv',
        tracerProvider: { getTracer: () => flaky as never },
        meterProvider: meters.meterProvider,
      });
      timeline.mark('load_config');
      expect(() => timeline.report()).not.toThrow();
      expect(spans.spans(SPAN_SERVER_STARTUP)).toHaveLength(1);
    } finally {
      warnings.stop();
    }
  });
});
