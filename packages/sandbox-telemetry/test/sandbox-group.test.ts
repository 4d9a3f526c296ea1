// The lifecycle metrics follow Gym's rule (recorded only while the `sandbox` span group is on,
// which the default groups leave out), and say so: one diag warning the first time a lifecycle
// would have recorded but for the group. Its own file: the warning is once per module copy.

import { INSTRUMENTS, type SpanGroup } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { SandboxLifecycle } from '@gym/sandbox-telemetry';
import { createMetricHarness, type DiagCapture, type MetricHarness, pointsOf } from '@gym/test-kit';
import { afterEach, beforeEach, expect, it } from '@jest/globals';
import { captureSandboxDiag } from './support.js';

let m: MetricHarness;
let diagnostics: DiagCapture;

function state(metricsExporting: boolean, spanGroups: SpanGroup[]): void {
  setTelemetryState({ metricsExporting, tracesExporting: metricsExporting, spanGroups, orchestrator: false });
}
/** A lifecycle that creates, execs, retries, transfers and releases one sandbox. */
function useOne(meterProvider?: MetricHarness['meterProvider']): void {
  const lifecycle = new SandboxLifecycle({ provider: 'docker', meterProvider });
  lifecycle.create(() => {
    lifecycle.retried();
    return 'sandbox';
  });
  lifecycle.exec(() => 'ran');
  lifecycle.transfer(() => 'moved');
  lifecycle.release();
}

beforeEach(() => {
  m = createMetricHarness();
  diagnostics = captureSandboxDiag();
});
afterEach(async () => {
  diagnostics.stop();
  setTelemetryState(undefined);
  await m.shutdown();
});

it('nothing exporting (the default groups, no meter provider): nothing recorded and nothing said', () => {
  state(false, ['job', 'server', 'http_client', 'rollout']);
  useOne();
  expect(diagnostics.lines('warn')).toEqual([]);
});

it('the sandbox group on: recorded, and nothing said', async () => {
  state(true, ['job', 'server', 'http_client', 'rollout', 'sandbox']);
  const lifecycle = new SandboxLifecycle({ provider: 'docker', meterProvider: m.meterProvider });
  lifecycle.create(() => 'sandbox');
  expect(pointsOf<number>(await m.collect(), INSTRUMENTS.sandboxActive.name)[0]?.value).toBe(1);
  expect(diagnostics.lines('warn')).toEqual([]);
});

it('metrics exporting under the default groups: nothing recorded, and one warning that names the group', async () => {
  state(true, ['job', 'server', 'http_client', 'rollout']);
  useOne(m.meterProvider);
  useOne(m.meterProvider);
  useOne(); // the global provider's turn: metrics export
  expect((await m.collect()).size).toBe(0);
  expect(diagnostics.lines('warn')).toEqual([
    expect.stringMatching(
      /^@gym\/sandbox-telemetry: the 'sandbox' span group is off, so the sandbox lifecycle metrics .* NEMO_GYM_OTEL_SPAN_GROUPS=default,sandbox/,
    ),
  ]);
});
