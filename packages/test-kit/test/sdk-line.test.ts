// Which OpenTelemetry SDK this run really loaded. jest.config.js maps @opentelemetry/* to the
// 2.x line (test/otel2, API 1.9) on a Node that cannot run 3.x, and leaves the root's 3.x line
// (API 1.10) otherwise. The versions are read from what the SDK itself reports: the
// `telemetry.sdk.version` of the resource its providers export with, and the version of the
// API that registered the global providers.

import { createMetricHarness, createSpanHarness } from '@gym/test-kit';
import { afterAll, expect, it } from '@jest/globals';
import { metrics, trace } from '@opentelemetry/api';

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const line = major > 22 || (major === 22 && minor >= 15) ? 3 : 2;
const metricHarness = createMetricHarness();
const spanHarness = createSpanHarness();
afterAll(async () => {
  metrics.disable();
  trace.disable();
  await metricHarness.shutdown();
  await spanHarness.shutdown();
});

it(`Node ${process.versions.node} runs OpenTelemetry JS ${line}.x`, async () => {
  metricHarness.meterProvider.getMeter('sdk-line').createCounter('sdk.line').add(1);
  const { resourceMetrics } = await metricHarness.reader.collect();
  const metricsSdk = String(resourceMetrics.resource.attributes['telemetry.sdk.version']);

  spanHarness.tracer.startSpan('sdk-line').end();
  const [span] = spanHarness.spans('sdk-line');
  const traceSdk = String(span?.resource.attributes['telemetry.sdk.version']);

  metrics.setGlobalMeterProvider(metricHarness.meterProvider);
  const api = (globalThis as Record<symbol, { version?: string } | undefined>)[Symbol.for('opentelemetry.js.api.1')];

  expect({ metricsSdk, traceSdk, api: api?.version }).toEqual({
    metricsSdk: expect.stringMatching(new RegExp(`^${line}\\.`)),
    traceSdk: expect.stringMatching(new RegExp(`^${line}\\.`)),
    api: expect.stringMatching(line === 3 ? /^1\.10\./ : /^1\.9\./),
  });
});
