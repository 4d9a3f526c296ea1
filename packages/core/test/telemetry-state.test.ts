import { SPAN_GROUP_PRESETS } from '@gym/constants';
import { currentSpanGroups, getTelemetryState, isMetricsExporting, setTelemetryState } from '@gym/core';
import { afterEach, describe, expect, it } from '@jest/globals';

const savedEnv = { ...process.env };

afterEach(() => {
  setTelemetryState(undefined);
  process.env = { ...savedEnv };
});

describe('telemetry state contract', () => {
  it('is undefined until somebody writes it', () => {
    expect(getTelemetryState()).toBeUndefined();
  });

  it('publishes a frozen, versioned copy', () => {
    const groups = new Set(['server', 'sandbox'] as const);
    const written = setTelemetryState({
      metricsExporting: true,
      tracesExporting: false,
      spanGroups: groups,
      orchestrator: true,
    });
    const read = getTelemetryState();
    expect(read).toBe(written);
    expect(read).toMatchObject({
      version: 1,
      metricsExporting: true,
      tracesExporting: false,
      orchestrator: true,
      sandboxSampleIntervalSeconds: 0,
    });
    expect(Object.isFrozen(read)).toBe(true);
    expect([...(read?.spanGroups ?? [])].sort()).toEqual(['sandbox', 'server']);
    // The writer's set is copied: changing it later does not change the published state.
    (groups as Set<string>).add('job');
    expect(read?.spanGroups.has('job')).toBe(false);
  });

  it('lives in one global slot keyed by Symbol.for, so a second copy of the package reads it', () => {
    setTelemetryState({ metricsExporting: false, tracesExporting: true, spanGroups: [], orchestrator: false });
    const slot = (globalThis as Record<symbol, unknown>)[Symbol.for('@gym/telemetry-state.v1')];
    expect(slot).toBe(getTelemetryState());
  });

  it('clears with undefined', () => {
    setTelemetryState({ metricsExporting: true, tracesExporting: true, spanGroups: [], orchestrator: false });
    setTelemetryState(undefined);
    expect(getTelemetryState()).toBeUndefined();
  });

  it('keeps only a finite positive sample interval', () => {
    for (const [given, kept] of [
      [5, 5],
      [0.5, 0.5],
      [0, 0],
      [-1, 0],
      [Number.NaN, 0],
      [Number.POSITIVE_INFINITY, 0],
    ] as const) {
      const state = setTelemetryState({
        metricsExporting: false,
        tracesExporting: false,
        spanGroups: [],
        orchestrator: false,
        sandboxSampleIntervalSeconds: given,
      });
      expect(state.sandboxSampleIntervalSeconds).toBe(kept);
    }
  });
});

describe('a wrong init is a programming error', () => {
  const GOOD = { metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator: false } as const;

  it.each([
    ['metricsExporting', 'false', /init\.metricsExporting must be true or false; got string "false"/],
    ['tracesExporting', 1, /init\.tracesExporting must be true or false; got number 1/],
    ['orchestrator', undefined, /init\.orchestrator must be true or false; got undefined/],
    ['spanGroups', 'server', /init\.spanGroups must be an iterable of span group names; got string "server"/],
    ['spanGroups', 5, /init\.spanGroups must be an iterable of span group names; got number 5/],
    ['spanGroups', ['server', 'bogus'], /init\.spanGroups entry must be one of "job", .*; got string "bogus"/],
  ])('%s = %p throws, naming it, and publishes nothing', (field, value, message) => {
    setTelemetryState({ ...GOOD, metricsExporting: true });
    expect(() => setTelemetryState({ ...GOOD, [field]: value } as never)).toThrow(message);
    // The earlier state stays: a string "false" must not have switched anything.
    expect(getTelemetryState()?.metricsExporting).toBe(true);
  });

  it('a value that is no object throws', () => {
    expect(() => setTelemetryState('on' as never)).toThrow(TypeError);
    expect(getTelemetryState()).toBeUndefined();
  });
});

describe('currentSpanGroups', () => {
  it('follows the published state when there is one', () => {
    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = 'all';
    setTelemetryState({
      metricsExporting: false,
      tracesExporting: false,
      spanGroups: ['sandbox'],
      orchestrator: false,
    });
    expect([...currentSpanGroups()]).toEqual(['sandbox']);
  });

  it('falls back to NEMO_GYM_OTEL_SPAN_GROUPS, then NEMO_LENS_SPAN_GROUPS, then default', () => {
    delete process.env.NEMO_GYM_OTEL_SPAN_GROUPS;
    delete process.env.NEMO_LENS_SPAN_GROUPS;
    expect([...currentSpanGroups()].sort()).toEqual([...SPAN_GROUP_PRESETS.default].sort());
    process.env.NEMO_LENS_SPAN_GROUPS = 'sandbox';
    expect([...currentSpanGroups()]).toEqual(['sandbox']);
    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = '  ';
    expect([...currentSpanGroups()]).toEqual(['sandbox']);
    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = 'verify';
    expect([...currentSpanGroups()]).toEqual(['verify']);
  });
});

describe('isMetricsExporting / isTracesExporting', () => {
  it('without a published state, follow the OpenTelemetry API globals', async () => {
    const { metrics, trace } = await import('@opentelemetry/api');
    const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
    const { TracerProvider } = await import('@opentelemetry/sdk-trace');
    const { isMetricsExporting, isTracesExporting } = await import('@gym/core');
    expect(isMetricsExporting()).toBe(false);
    expect(isTracesExporting()).toBe(false);
    metrics.setGlobalMeterProvider(new MeterProvider());
    trace.setGlobalTracerProvider(new TracerProvider());
    try {
      expect(isMetricsExporting()).toBe(true);
      expect(isTracesExporting()).toBe(true);
      // A published state wins over the globals.
      setTelemetryState({ metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator: false });
      expect(isMetricsExporting()).toBe(false);
      expect(isTracesExporting()).toBe(false);
    } finally {
      metrics.disable();
      trace.disable();
    }
    setTelemetryState(undefined);
    expect(isMetricsExporting()).toBe(false);
    expect(isTracesExporting()).toBe(false);
  });
});

describe('a hand-written state', () => {
  const key = Symbol.for('@gym/telemetry-state.v1');
  const slot = globalThis as Record<symbol, unknown>;

  it('of the published shape is used as is, judged once per object', () => {
    const handWritten = {
      version: 1,
      metricsExporting: true,
      tracesExporting: false,
      spanGroups: new Set(['rollout']),
    };
    slot[key] = handWritten;
    expect(getTelemetryState()).toBe(handWritten);
    expect(isMetricsExporting()).toBe(true);
  });

  it('of another shape is ignored, with one warning, as if nobody published one', async () => {
    const { diag, DiagLogLevel } = await import('@opentelemetry/api');
    const lines: string[] = [];
    const noop = () => {};
    diag.setLogger(
      { error: noop, info: noop, debug: noop, verbose: noop, warn: (line: string) => lines.push(line) },
      { logLevel: DiagLogLevel.ALL, suppressOverrideMessage: true },
    );
    try {
      for (const value of [42, { version: 2 }, { version: 1, metricsExporting: true, spanGroups: ['rollout'] }]) {
        slot[key] = value;
        expect(getTelemetryState()).toBeUndefined();
        expect(isMetricsExporting()).toBe(false);
      }
      expect(lines).toEqual([expect.stringContaining('@gym/core: the telemetry-state global holds a value')]);
    } finally {
      diag.disable();
    }
  });
});
