// The Prometheus exporter end to end: record the Gym instruments through the handle's meter
// and scrape the endpoint the bootstrap bound.

import { ATTR_EXECUTOR, ATTR_OPERATION, ATTR_OPERATION_OUTCOME, INSTRUMENTS } from '@gym/constants';
import { afterEach, describe, expect, it } from '@jest/globals';
import { initTelemetry } from '../src/index.js';
import { resetTelemetryForTesting } from '../src/telemetry.js';
import { samples, scrape } from './helpers/prometheus-text.js';

afterEach(async () => {
  await resetTelemetryForTesting();
});

describe('the prometheus exporter', () => {
  it('serves the gym_… series at the endpoint it reports', async () => {
    const handle = await initTelemetry({
      serverName: 'prom',
      serverType: 'resources_servers',
      env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: '0' },
    });
    if (handle === null) throw new Error('expected a handle');
    const { meter } = handle;
    meter
      .createHistogram(INSTRUMENTS.operationDuration.name, {
        unit: 'ms',
        advice: { explicitBucketBoundaries: [...INSTRUMENTS.operationDuration.boundaries] },
      })
      .record(42, { [ATTR_OPERATION]: 'verify', [ATTR_EXECUTOR]: 'subprocess', [ATTR_OPERATION_OUTCOME]: 'ok' });
    meter
      .createObservableUpDownCounter(INSTRUMENTS.operationActive.name)
      .addCallback((result) => result.observe(3, { [ATTR_OPERATION]: 'tool', [ATTR_EXECUTOR]: 'inline' }));
    meter.createGauge(INSTRUMENTS.serversActive.name).record(4);

    const text = await scrape(handle.prometheusEndpoint as string);
    const attrs =
      'nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",nemo_gym_resources_operation_outcome="ok"';
    expect(samples(text, 'gym_resources_operation_duration_ms_count{')).toEqual([expect.stringContaining(attrs)]);
    expect(samples(text, 'gym_resources_operation_duration_ms_count{')[0]).toMatch(/ 1$/);
    expect(samples(text, 'gym_resources_operation_duration_ms_sum{')[0]).toMatch(/ 42$/);
    expect(
      samples(text, 'gym_resources_operation_duration_ms_bucket{').map((line) => /le="([^"]+)"/.exec(line)?.[1]),
    ).toEqual([...INSTRUMENTS.operationDuration.boundaries.map(String), '+Inf']);
    expect(samples(text, 'gym_resources_operation_active{')).toEqual([
      expect.stringMatching(/nemo_gym_resources_operation="tool".* 3$/),
    ]);
    expect(samples(text, 'gym_servers_active{')).toEqual([expect.stringMatching(/ 4$/)]);
  });

  it('answers 404 off the /metrics path', async () => {
    const handle = await initTelemetry({
      serverName: 'prom',
      serverType: 'resources_servers',
      env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: '0' },
    });
    const url = new URL(handle?.prometheusEndpoint as string);
    const response = await fetch(new URL('/other', url));
    expect(response.status).toBe(404);
    await response.arrayBuffer();
  });
});
