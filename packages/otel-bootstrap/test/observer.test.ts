// The bootstrap starts @gym/observer while metrics export (NEMO_GYM_OTEL_OBSERVER, default on)
// and stops it at shutdown. Checked on what a real Prometheus scrape of the process shows.

import { INSTRUMENTS } from '@gym/constants';
import { createMetricHarness, DeltaPullMetricReader } from '@gym/test-kit';
import { afterEach, describe, expect, it } from '@jest/globals';
import { type MeterProvider as ApiMeterProvider, metrics } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { initTelemetry, shutdownTelemetry } from '../src/index.js';
import { resetTelemetryForTesting } from '../src/telemetry.js';
import { scrape } from './helpers/prometheus-text.js';

afterEach(async () => {
  await resetTelemetryForTesting();
});

/** The Prometheus name prefix of an OpenTelemetry instrument name. */
const promName = (name: string): string => name.replace(/\./g, '_');

async function start(extra: NodeJS.ProcessEnv, serverName = 'math_verifier') {
  const warnings: string[] = [];
  const handle = await initTelemetry({
    serverName,
    serverType: 'resources_servers',
    env: {
      NEMO_GYM_OTEL_ENABLED: '1',
      NEMO_GYM_OTEL_EXPORTER: 'prometheus',
      OTEL_EXPORTER_PROMETHEUS_PORT: '0',
      ...extra,
    },
    onWarning: (message) => warnings.push(message),
  });
  expect(handle?.metricsExporting).toBe(true);
  return { text: await scrape(handle?.prometheusEndpoint as string), warnings };
}

describe('the observer under the bootstrap', () => {
  it('runs while metrics export: process metrics and the in-flight series of this server are scraped', async () => {
    const { text, warnings } = await start({});
    expect(warnings).toEqual([]);
    expect(text).toMatch(new RegExp(`^${promName(INSTRUMENTS.processMemoryUsage.name)}`, 'm'));
    expect(text).toMatch(
      new RegExp(
        `^${promName(INSTRUMENTS.requestsInFlight.name)}\\S*\\{[^}]*nemo_gym_server_name="math_verifier"`,
        'm',
      ),
    );
  });

  it('NEMO_GYM_OTEL_OBSERVER=0 switches it off', async () => {
    const { text } = await start({ NEMO_GYM_OTEL_OBSERVER: '0' });
    expect(text).not.toContain(promName(INSTRUMENTS.processMemoryUsage.name));
    expect(text).not.toContain(promName(INSTRUMENTS.requestsInFlight.name));
  });

  it('a server name that is not a valid series name starts it without the in-flight series', async () => {
    const { text, warnings } = await start({}, 'has space');
    expect(warnings).toEqual([]);
    expect(text).toMatch(new RegExp(`^${promName(INSTRUMENTS.processMemoryUsage.name)}`, 'm'));
    expect(text).not.toContain(promName(INSTRUMENTS.requestsInFlight.name));
  });

  it('runs on a provider registered by someone else, and stops with the bootstrap, leaving theirs running', async () => {
    // Delta: an observable instrument shows up in a collection only when its callback ran.
    const reader = new DeltaPullMetricReader();
    const theirs = new MeterProvider({ readers: [reader] });
    metrics.setGlobalMeterProvider(theirs);
    const names = async () =>
      (await reader.collect()).resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics.map((m) => m.descriptor.name),
      );
    try {
      const handle = await initTelemetry({
        serverName: 'reused',
        serverType: 'resources_servers',
        env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'none' },
      });
      expect(handle?.metricsExporting).toBe(true);
      expect(await names()).toContain(INSTRUMENTS.processMemoryUsage.name);
      await shutdownTelemetry();
      expect(await names()).not.toContain(INSTRUMENTS.processMemoryUsage.name);
      expect(metrics.getMeterProvider()).toBe(theirs);
    } finally {
      metrics.disable();
      await theirs.shutdown();
    }
  });

  it('does not start when metrics do not export (nor is it loaded: see lazy-sdk.test.ts)', async () => {
    // Metrics switched off while someone else's provider is registered: nothing may land on it.
    const theirs = createMetricHarness();
    metrics.setGlobalMeterProvider(theirs.meterProvider as unknown as ApiMeterProvider);
    try {
      const handle = await initTelemetry({
        serverName: 'quiet',
        serverType: 'resources_servers',
        env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'none', NEMO_GYM_OTEL_METRICS_ENABLED: '0' },
      });
      expect(handle?.metricsExporting).toBe(false);
      expect((await theirs.reader.collect()).resourceMetrics.scopeMetrics).toEqual([]);
    } finally {
      metrics.disable();
      await theirs.shutdown();
    }
  });
});
