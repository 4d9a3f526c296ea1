import { setTelemetryState } from '@gym/core';
import { samplingInterval } from '@gym/sandbox-telemetry';
import { createSpanHarness, type DiagCapture } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { trace } from '@opentelemetry/api';
import { captureSandboxDiag } from './support.js';

const ENV = 'NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS';
const LENS = 'NEMO_LENS_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS';
const GROUPS = 'NEMO_GYM_OTEL_SPAN_GROUPS';

let diagnostics: DiagCapture;
beforeEach(() => {
  diagnostics = captureSandboxDiag();
});
afterEach(() => {
  diagnostics.stop();
  trace.disable();
  setTelemetryState(undefined);
  for (const key of [ENV, LENS, GROUPS]) delete process.env[key];
});

function publish(tracesExporting: boolean, groups: string[], interval?: number) {
  setTelemetryState({
    metricsExporting: true,
    tracesExporting,
    spanGroups: groups as never,
    orchestrator: false,
    ...(interval === undefined ? {} : { sandboxSampleIntervalSeconds: interval }),
  });
}

describe('with a published telemetry state', () => {
  it('is the published interval when traces export and the sandbox group is on', () => {
    publish(true, ['server', 'sandbox'], 2.5);
    expect(samplingInterval()).toBe(2.5);
  });

  it.each([
    ['traces not exporting', false, ['sandbox'], 5],
    ['sandbox group off', true, ['server', 'rollout'], 5],
    ['interval unset', true, ['sandbox'], undefined],
    ['interval 0', true, ['sandbox'], 0],
  ])('is 0 with %s', (_name, exporting, groups, interval) => {
    publish(exporting as boolean, groups as string[], interval as number | undefined);
    expect(samplingInterval()).toBe(0);
  });

  it('the published state wins over the environment', () => {
    process.env[ENV] = '9';
    publish(true, ['sandbox']);
    expect(samplingInterval()).toBe(0);
  });
});

describe('without a published state (OpenTelemetry globals and the environment)', () => {
  beforeEach(() => {
    process.env[GROUPS] = 'default,sandbox';
    process.env[ENV] = '3';
  });

  it('is 0 while no TracerProvider is registered', () => {
    expect(samplingInterval()).toBe(0);
  });

  it('is the env value once a TracerProvider is registered and the sandbox group is on', () => {
    trace.setGlobalTracerProvider(createSpanHarness().tracerProvider);
    expect(samplingInterval()).toBe(3);
    process.env[GROUPS] = 'default';
    expect(samplingInterval()).toBe(0);
  });

  it('falls back to NEMO_LENS_… when the first variable is unset or blank', () => {
    trace.setGlobalTracerProvider(createSpanHarness().tracerProvider);
    process.env[ENV] = '  ';
    process.env[LENS] = '0.25';
    expect(samplingInterval()).toBe(0.25);
    delete process.env[ENV];
    expect(samplingInterval()).toBe(0.25);
    process.env[ENV] = '4';
    expect(samplingInterval()).toBe(4);
  });

  it('unset or 0 means off, with no warning', () => {
    trace.setGlobalTracerProvider(createSpanHarness().tracerProvider);
    delete process.env[ENV];
    expect(samplingInterval()).toBe(0);
    process.env[ENV] = '0';
    expect(samplingInterval()).toBe(0);
    expect(diagnostics.lines('warn')).toEqual([]);
  });

  it.each(['abc', '-1', '1e3', '0x10', 'Infinity', '5s', '99999999'])('malformed %p → 0 and one warning', (raw) => {
    trace.setGlobalTracerProvider(createSpanHarness().tracerProvider);
    process.env[ENV] = raw;
    expect(samplingInterval()).toBe(0);
    expect(samplingInterval()).toBe(0);
    expect(diagnostics.lines('warn')).toHaveLength(1);
    expect(diagnostics.lines('warn')[0]).toContain(`${ENV}=${JSON.stringify(raw)}`);
    expect(diagnostics.lines('warn')[0]).toContain(
      'allowed: 0 (no sampling) or a plain decimal number of seconds from 0.1 to',
    );
  });

  it('accepts plain decimals with surrounding spaces', () => {
    trace.setGlobalTracerProvider(createSpanHarness().tracerProvider);
    for (const [raw, seconds] of [
      [' 10 ', 10],
      ['0.5', 0.5],
      ['.5', 0.5],
      ['7.', 7],
    ] as const) {
      process.env[ENV] = raw;
      expect(samplingInterval()).toBe(seconds);
    }
  });
});
