import { SPAN_GROUP_PRESETS, SPAN_GROUPS, type SpanGroup } from '@gym/constants';
import { getTelemetryState } from '@gym/core';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { initTelemetry, isSpanGroupEnabled } from '../src/index.js';
import { resetTelemetryForTesting } from '../src/telemetry.js';
import { type ConsoleCapture, captureConsole } from './helpers/console-capture.js';

let printed: ConsoleCapture;
beforeEach(() => {
  printed = captureConsole();
});

afterEach(async () => {
  await resetTelemetryForTesting();
  printed.restore();
});

/** Sets telemetry up with traces exporting (console exporter; no span is made) and `extra` env. */
async function initWith(extra: NodeJS.ProcessEnv, warnings: string[] = []): Promise<void> {
  const handle = await initTelemetry({
    serverName: 'groups',
    serverType: 'resources_servers',
    env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'console', ...extra },
    onWarning: (message) => warnings.push(message),
  });
  expect(handle).not.toBeNull();
}

function enabledGroups(): SpanGroup[] {
  return SPAN_GROUPS.filter((group) => isSpanGroupEnabled(group));
}

/** The `default` preset, in spec order (the order {@link enabledGroups} reports). */
const DEFAULT_GROUPS: SpanGroup[] = SPAN_GROUPS.filter((group) =>
  (SPAN_GROUP_PRESETS.default as readonly SpanGroup[]).includes(group),
);
/** `default,sandbox`, in spec order. */
const DEFAULT_AND_SANDBOX: SpanGroup[] = SPAN_GROUPS.filter(
  (group) => group === 'sandbox' || DEFAULT_GROUPS.includes(group),
);

describe('isSpanGroupEnabled', () => {
  it('is false for every group before telemetry is set up, and when it is disabled', async () => {
    expect(enabledGroups()).toEqual([]);
    await initTelemetry({ serverName: 'off', serverType: 'resources_servers', env: {} });
    expect(enabledGroups()).toEqual([]);
  });

  it.each([
    [undefined, DEFAULT_GROUPS],
    ['default', DEFAULT_GROUPS],
    ['per_rollout', ['server', 'http_client', 'rollout', 'verify', 'agent', 'model_call']],
    ['all', [...SPAN_GROUPS]],
    ['sandbox', ['sandbox']],
    ['verify,agent', ['verify', 'agent']],
    ['default,sandbox', DEFAULT_AND_SANDBOX],
    [' Verify , AGENT ', ['verify', 'agent']],
    ['PER_ROLLOUT', ['server', 'http_client', 'rollout', 'verify', 'agent', 'model_call']],
    [' , ', []],
  ])('spec %j enables %j', async (spec, expected) => {
    await initWith(spec === undefined ? {} : { NEMO_GYM_OTEL_SPAN_GROUPS: spec });
    expect(enabledGroups()).toEqual(expected);
  });

  it('reads the NEMO_LENS_SPAN_GROUPS fallback', async () => {
    await initWith({ NEMO_LENS_SPAN_GROUPS: 'sandbox' });
    expect(enabledGroups()).toEqual(['sandbox']);
  });

  it('reports unknown names once, in one message, and ignores them', async () => {
    const warnings: string[] = [];
    await initWith({ NEMO_GYM_OTEL_SPAN_GROUPS: 'default,rollouts,Rollouts,sandboxes' }, warnings);
    expect(enabledGroups()).toEqual(DEFAULT_GROUPS);
    expect(warnings).toEqual([
      '@gym/otel-bootstrap: unknown span groups ignored: rollouts, sandboxes (allowed: presets default, per_rollout, all; groups job, server, http_client, rollout, verify, agent, model_call, sandbox, startup)',
    ]);
  });

  it('every gate is shut when traces are not exported, whatever the spec', async () => {
    await initWith({ NEMO_GYM_OTEL_SPAN_GROUPS: 'all', NEMO_GYM_OTEL_TRACES_ENABLED: '0' });
    expect(enabledGroups()).toEqual([]);
    expect(getTelemetryState()?.metricsExporting).toBe(true);
  });

  it('a metrics-only process still publishes its configured groups, for group-scoped metrics (sandbox lifecycle)', async () => {
    await initWith({ NEMO_GYM_OTEL_SPAN_GROUPS: 'default,sandbox', NEMO_GYM_OTEL_TRACES_ENABLED: '0' });
    expect([...(getTelemetryState()?.spanGroups ?? [])].sort()).toEqual([...DEFAULT_AND_SANDBOX].sort());
    expect(getTelemetryState()?.tracesExporting).toBe(false);
    expect(enabledGroups()).toEqual([]);
  });

  it('follows a state published by hand (a user who set up OpenTelemetry without the bootstrap)', async () => {
    const { setTelemetryState } = await import('@gym/core');
    setTelemetryState({ metricsExporting: true, tracesExporting: true, spanGroups: ['sandbox'], orchestrator: false });
    expect(enabledGroups()).toEqual(['sandbox']);
  });
});

describe('the published sandbox sample interval', () => {
  it('is the configured value while traces export', async () => {
    await initWith({ NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS: '5' });
    expect(getTelemetryState()?.sandboxSampleIntervalSeconds).toBe(5);
  });

  it('is 0 when traces do not export', async () => {
    await initWith({ NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS: '5', NEMO_GYM_OTEL_TRACES_ENABLED: 'no' });
    expect(getTelemetryState()?.sandboxSampleIntervalSeconds).toBe(0);
  });
});
