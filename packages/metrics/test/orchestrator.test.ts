// Single writer of gym.servers.active: the orchestrator, declared explicitly or through the
// published telemetry state. Everywhere else the call is refused with one clear warning.

import { INSTRUMENTS } from '@gym/constants';
import { setTelemetryState, type TelemetryStateInit } from '@gym/core';
import { captureDiag, createMetricHarness, type DiagCapture, gaugeValue, type MetricHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { diag, metrics } from '@opentelemetry/api';
import { freshMetrics, type MetricsModule } from './support/fresh-metrics.js';

let gym: MetricsModule;
let harness: MetricHarness;
let logger: DiagCapture;

const state = (orchestrator: boolean): TelemetryStateInit => ({
  metricsExporting: true,
  tracesExporting: false,
  spanGroups: [],
  orchestrator,
});

beforeEach(async () => {
  gym = await freshMetrics();
  harness = createMetricHarness();
  logger = captureDiag();
});

afterEach(async () => {
  await harness.shutdown();
  metrics.disable();
  setTelemetryState(undefined);
  diag.disable();
});

describe('refusal outside the orchestrator', () => {
  it('exports nothing and warns exactly once, clearly, however often it is called', async () => {
    expect(gym.isOrchestrator()).toBe(false);
    for (const count of [3, 5, 0])
      new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordActiveServers(count);
    expect((await harness.collect()).has(INSTRUMENTS.serversActive.name)).toBe(false);
    const warnings = logger.from('@gym/metrics:');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.level).toBe('warn');
    expect(warnings[0]?.message).toContain('recordActiveServers refused');
    expect(warnings[0]?.message).toContain('gym.servers.active');
    expect(warnings[0]?.message).toContain('declareOrchestrator()');
  });

  it('is refused when the published state says this process is not the orchestrator', async () => {
    metrics.setGlobalMeterProvider(harness.meterProvider);
    setTelemetryState(state(false));
    gym.recordActiveServers(3);
    expect((await harness.collect()).size).toBe(0);
    expect(logger.from('@gym/metrics:')).toHaveLength(1);
  });

  it('is silent when metrics are off: nothing could be overwritten, so nothing to warn about', () => {
    gym.recordActiveServers(3);
    expect(logger.from('@gym/metrics:')).toEqual([]);
  });

  it('declareOrchestrator(false) wins over a published orchestrator state', async () => {
    metrics.setGlobalMeterProvider(harness.meterProvider);
    setTelemetryState(state(true));
    expect(gym.isOrchestrator()).toBe(true);
    gym.declareOrchestrator(false);
    expect(gym.isOrchestrator()).toBe(false);
    gym.recordActiveServers(3);
    expect((await harness.collect()).size).toBe(0);
    expect(logger.from('@gym/metrics:')).toHaveLength(1);
  });
});

describe('the orchestrator writes', () => {
  it('after an explicit declareOrchestrator()', async () => {
    gym.declareOrchestrator();
    expect(gym.isOrchestrator()).toBe(true);
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordActiveServers(4);
    expect(gaugeValue(await harness.collect(), INSTRUMENTS.serversActive.name)).toBe(4);
    expect(logger.from('@gym/metrics:')).toEqual([]);
  });

  it('when the published state (as @gym/otel-bootstrap writes it) says orchestrator', async () => {
    metrics.setGlobalMeterProvider(harness.meterProvider);
    setTelemetryState(state(true));
    gym.recordActiveServers(4);
    gym.recordActiveServers(0); // before shutdown
    expect(gaugeValue(await harness.collect(), INSTRUMENTS.serversActive.name)).toBe(0);
    expect(logger.from('@gym/metrics:')).toEqual([]);
  });

  it('follows the published state when it changes, while nothing was declared', () => {
    setTelemetryState(state(true));
    expect(gym.isOrchestrator()).toBe(true);
    setTelemetryState(state(false));
    expect(gym.isOrchestrator()).toBe(false);
    setTelemetryState(undefined);
    expect(gym.isOrchestrator()).toBe(false);
  });
});
