// What the handle says is what is in effect: the standard off-switches are honoured, a
// shutdown that arrives during setup leaves no "exporting" handle behind, and the exports of
// one reader never overlap, so a store that keeps the last value never sees a counter go down
// after a collector outage. (Reused providers: registration.test.ts.)

import { getTelemetryState } from '@gym/core';
import { decodeOtlpMetrics, waitFor } from '@gym/test-kit';
import { afterEach, describe, expect, it } from '@jest/globals';
import { getTelemetry, initTelemetry, shutdownTelemetry } from '../src/index.js';
import { isGloballyRegistered } from '../src/otel-globals.js';
import { resetTelemetryForTesting } from '../src/telemetry.js';
import { startOtlpReceiver } from './helpers/otlp-receiver.js';

afterEach(async () => {
  await resetTelemetryForTesting();
});

const PROMETHEUS = {
  NEMO_GYM_OTEL_ENABLED: '1',
  NEMO_GYM_OTEL_EXPORTER: 'prometheus',
  OTEL_EXPORTER_PROMETHEUS_PORT: '0',
};

function setUp(env: NodeJS.ProcessEnv, warnings: string[] = []) {
  return initTelemetry({
    serverName: 'honest',
    serverType: 'resources_servers',
    env: { NEMO_GYM_OTEL_OBSERVER: '0', ...env },
    onWarning: (message) => warnings.push(message),
  });
}

describe('the standard off-switches', () => {
  it('OTEL_SDK_DISABLED=true: no handle, nothing registered, no endpoint, and one warning saying which switch won', async () => {
    const warnings: string[] = [];
    await expect(setUp({ ...PROMETHEUS, OTEL_SDK_DISABLED: 'true' }, warnings)).resolves.toBeNull();
    expect(getTelemetry()).toBeNull();
    expect(isGloballyRegistered('metrics')).toBe(false);
    expect(isGloballyRegistered('trace')).toBe(false);
    expect(getTelemetryState()).toMatchObject({ metricsExporting: false, tracesExporting: false });
    expect(warnings).toEqual([
      '@gym/otel-bootstrap: telemetry is off: OTEL_SDK_DISABLED=true wins over NEMO_GYM_OTEL_ENABLED',
    ]);
  });

  it('OTEL_METRICS_EXPORTER=none: metrics do not export and the Prometheus endpoint is not built', async () => {
    const handle = await setUp({ ...PROMETHEUS, OTEL_METRICS_EXPORTER: 'none' });
    expect(handle).toMatchObject({ metricsExporting: false, isExporting: false });
    expect(handle?.prometheusEndpoint).toBeUndefined();
    expect(isGloballyRegistered('metrics')).toBe(false);
    expect(getTelemetryState()?.metricsExporting).toBe(false);
  });

  it('OTEL_TRACES_EXPORTER=none: only metrics reach the collector', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const handle = await setUp({
        NEMO_GYM_OTEL_ENABLED: '1',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_TRACES_EXPORTER: 'none',
      });
      expect(handle).toMatchObject({ metricsExporting: true, tracesExporting: false });
      expect(isGloballyRegistered('trace')).toBe(false);
      handle?.meter.createCounter('gym.test.kept').add(1);
      handle?.tracer.startSpan('gym.test.dropped').end();
      await shutdownTelemetry();
      expect(receiver.requests.map((request) => request.path)).toEqual(['/v1/metrics']);
    } finally {
      await receiver.close();
    }
  });
});

describe('shutdownTelemetry() during initTelemetry() (a SIGTERM while the server starts)', () => {
  it('the setup resolves to null, nothing says "exporting", and the endpoint is released', async () => {
    const warnings: string[] = [];
    const starting = setUp(PROMETHEUS, warnings);
    const stopping = shutdownTelemetry();
    await expect(starting).resolves.toBeNull();
    await stopping;
    expect(getTelemetry()).toBeNull();
    expect(getTelemetryState()).toMatchObject({ metricsExporting: false, tracesExporting: false });
    expect(isGloballyRegistered('metrics')).toBe(false);
    expect(warnings).toEqual([]);
  });
});

describe('exports of one reader never overlap', () => {
  it('after a collector outage the cumulative values arrive in order', async () => {
    const receiver = await startOtlpReceiver();
    let ticker: NodeJS.Timeout | undefined;
    try {
      const handle = await setUp({
        NEMO_GYM_OTEL_ENABLED: '1',
        NEMO_GYM_OTEL_TRACES_ENABLED: '0',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_METRIC_EXPORT_INTERVAL: '1000',
      });
      const counter = handle?.meter.createCounter('gym.test.outage');
      ticker = setInterval(() => counter?.add(1), 5);
      const answered = (status: number) => receiver.requests.filter((request) => request.status === status).length;
      await waitFor('a first export', () => answered(200) >= 1, 20_000);
      receiver.answer = 503; // the collector goes down: the exporter retries with back-off
      await waitFor('exports refused during the outage', () => answered(503) >= 10, 30_000);
      const before = answered(200);
      receiver.answer = 200;
      await waitFor('exports after the outage', () => answered(200) >= before + 6, 30_000);
      clearInterval(ticker);
      await shutdownTelemetry();

      const values = receiver.requests
        .filter((request) => request.status === 200)
        .map((request) => {
          const metric = decodeOtlpMetrics(request.body)
            .flatMap((block) => block.scopes.flatMap((scope) => scope.items))
            .find((item) => item.name === 'gym.test.outage');
          return metric?.points[0]?.value ?? 0;
        });
      expect(values.length).toBeGreaterThanOrEqual(before + 6);
      const decreases = values.flatMap((value, index) =>
        index > 0 && value < (values[index - 1] as number) ? [`${values[index - 1]} → ${value}`] : [],
      );
      expect({ values, decreases }).toEqual({ values, decreases: [] });
    } finally {
      clearInterval(ticker);
      await receiver.close();
    }
  }, 90_000);
});
