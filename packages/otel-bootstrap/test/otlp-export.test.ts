// OTLP for real: the exporter sends http/protobuf to a local receiver, and the test kit's
// decoder (protobufjs over the OTLP field numbers) reads what went over the wire.

import { readFileSync } from 'node:fs';
import { INSTRUMENTS } from '@gym/constants';
import { decodeOtlpMetrics, decodeOtlpTraces } from '@gym/test-kit';
import { afterEach, describe, expect, it } from '@jest/globals';
import { initTelemetry, shutdownTelemetry } from '../src/index.js';
import { resetTelemetryForTesting } from '../src/telemetry.js';
import { startOtlpReceiver } from './helpers/otlp-receiver.js';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;

afterEach(async () => {
  await resetTelemetryForTesting();
});

describe('the otlp exporter', () => {
  it('delivers records made right before shutdownTelemetry(), with the metric name and the Gym resource', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const handle = await initTelemetry({
        serverName: 'verifier',
        serverType: 'resources_servers',
        env: {
          NEMO_GYM_OTEL_ENABLED: '1',
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_SERVICE_NAME: 'otlp-test',
          NEMO_GYM_OTEL_RUN_ID: 'run-otlp-1',
          // Ten minutes: the only way these points can leave before the assertions is the shutdown flush.
          OTEL_METRIC_EXPORT_INTERVAL: '600000',
        },
      });
      expect(handle).toMatchObject({ metricsExporting: true, tracesExporting: true });
      handle?.meter
        .createHistogram(INSTRUMENTS.rolloutDuration.name, {
          unit: 'ms',
          advice: { explicitBucketBoundaries: [...INSTRUMENTS.verifyDuration.boundaries] },
        })
        .record(125);
      handle?.tracer.startSpan('gym.verify').end();
      expect(receiver.requests.filter((request) => request.path === '/v1/metrics')).toEqual([]);

      await shutdownTelemetry();

      const byPath = (path: string) => receiver.requests.filter((request) => request.path === path);
      expect(byPath('/v1/metrics')).toHaveLength(1);
      expect(byPath('/v1/traces')).toHaveLength(1);
      for (const request of receiver.requests) expect(request.contentType).toBe('application/x-protobuf');

      const expectedResource = {
        'service.name': 'otlp-test/verifier',
        'nemo.gym.service_group': 'otlp-test',
        'nemo.gym.server.name': 'verifier',
        'nemo.gym.server.type': 'resources_servers',
        'nemo.gym.version': VERSION,
        'nemo.run.id': 'run-otlp-1',
      };
      const metricBlocks = decodeOtlpMetrics((byPath('/v1/metrics')[0] as { body: Buffer }).body);
      expect(metricBlocks).toHaveLength(1);
      expect(metricBlocks[0]?.resource).toMatchObject(expectedResource);
      // The point recorded right before shutdown, and the observer's last values with it.
      const metrics = metricBlocks.flatMap((block) => block.scopes.flatMap((scope) => scope.items));
      expect(metrics.find((metric) => metric.name === INSTRUMENTS.rolloutDuration.name)?.points).toMatchObject([
        { count: 1, sum: 125 },
      ]);
      expect(metrics.map((metric) => metric.name)).toEqual(
        expect.arrayContaining([INSTRUMENTS.rolloutDuration.name, INSTRUMENTS.processMemoryUsage.name]),
      );

      const traceBlocks = decodeOtlpTraces((byPath('/v1/traces')[0] as { body: Buffer }).body);
      expect(traceBlocks).toHaveLength(1);
      expect(traceBlocks[0]?.resource).toMatchObject(expectedResource);
      expect(traceBlocks[0]?.scopes.flatMap((scope) => scope.items.map((span) => span.name))).toEqual(['gym.verify']);
    } finally {
      await receiver.close();
    }
  });

  it('OTEL_METRIC_EXPORT_INTERVAL=300 (any positive integer, as OpenTelemetry says) exports every 300 ms', async () => {
    const receiver = await startOtlpReceiver();
    const warnings: string[] = [];
    try {
      const handle = await initTelemetry({
        serverName: 'fast',
        serverType: 'resources_servers',
        onWarning: (message) => warnings.push(message),
        env: {
          NEMO_GYM_OTEL_ENABLED: '1',
          NEMO_GYM_OTEL_TRACES_ENABLED: '0',
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_METRIC_EXPORT_INTERVAL: '300',
        },
      });
      expect(handle).toMatchObject({
        metricsExporting: true,
        config: { metricExportIntervalMillis: 300, metricExportTimeoutMillis: 300 },
      });
      handle?.meter.createCounter('gym.test.requests').add(1);
      // Periodic exports, before any shutdown: polled, with a deadline that only guards a hang.
      const metricRequests = () => receiver.requests.filter((request) => request.path === '/v1/metrics');
      const deadline = Date.now() + 30_000;
      while (metricRequests().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(metricRequests().length).toBeGreaterThanOrEqual(2);
      const names = decodeOtlpMetrics((metricRequests()[0] as { body: Buffer }).body).flatMap((block) =>
        block.scopes.flatMap((scope) => scope.items.map((metric) => metric.name)),
      );
      expect(names).toContain('gym.test.requests');
      expect(warnings).toEqual([]);
    } finally {
      await shutdownTelemetry();
      await receiver.close();
    }
  });

  it('honours a signal-specific endpoint', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const handle = await initTelemetry({
        serverName: 'judge',
        serverType: 'resources_servers',
        env: {
          NEMO_GYM_OTEL_ENABLED: '1',
          NEMO_GYM_OTEL_TRACES_ENABLED: '0',
          NEMO_GYM_OTEL_OBSERVER: '0',
          OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/custom/metrics`,
        },
      });
      handle?.meter.createCounter('gym.test.requests').add(1);
      await shutdownTelemetry();
      expect(receiver.requests.map((request) => request.path)).toEqual(['/custom/metrics']);
      const blocks = decodeOtlpMetrics((receiver.requests[0] as { body: Buffer }).body);
      expect(blocks[0]?.scopes.flatMap((scope) => scope.items.map((metric) => metric.name))).toEqual([
        'gym.test.requests',
      ]);
      expect(blocks[0]?.resource['service.name']).toBe('nemo-gym/judge');
    } finally {
      await receiver.close();
    }
  });
});
