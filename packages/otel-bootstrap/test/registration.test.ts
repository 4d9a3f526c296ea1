// "Exporting" must be true only when the libraries can see the provider. The OpenTelemetry API
// keeps its globals in one slot shared by every 1.x copy; a copy of another version that owns
// the slot makes `metrics.setGlobalMeterProvider` return false, and a provider registered by
// such a copy is invisible to this one. Both are simulated the way they happen: a foreign
// object planted in the slot.

import { getTelemetryState } from '@gym/core';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { metrics, trace } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { TracerProvider as SdkTracerProvider } from '@opentelemetry/sdk-trace';
import { type InitTelemetryOptions, initTelemetry, shutdownTelemetry } from '../src/index.js';
import { resetTelemetryForTesting } from '../src/telemetry.js';
import { type ConsoleCapture, captureConsole } from './helpers/console-capture.js';

const SLOT = Symbol.for('opentelemetry.js.api.1');
type Slot = Record<string, unknown>;
const holder = globalThis as unknown as Record<symbol, Slot | undefined>;
let saved: Slot | undefined;

let printed: ConsoleCapture;
beforeEach(() => {
  saved = holder[SLOT];
  printed = captureConsole();
});

afterEach(async () => {
  await resetTelemetryForTesting();
  if (saved === undefined) delete holder[SLOT];
  else holder[SLOT] = saved;
  printed.restore();
});

function options(env: NodeJS.ProcessEnv, warnings: string[]): InitTelemetryOptions {
  return {
    serverName: 'policy_model',
    serverType: 'resources_servers',
    env: { NEMO_GYM_OTEL_ENABLED: '1', ...env },
    onWarning: (message) => warnings.push(message),
  };
}

const PROMETHEUS = { NEMO_GYM_OTEL_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: '0' };

describe('another copy of @opentelemetry/api, of another version, owns the global slot', () => {
  it('metrics: the handle and the published state say "not exporting", one warning says why', async () => {
    holder[SLOT] = { version: '1.3.0' };
    const warnings: string[] = [];
    const handle = await initTelemetry(options(PROMETHEUS, warnings));
    expect(handle).toMatchObject({ metricsExporting: false, tracesExporting: false, isExporting: false });
    expect(handle?.prometheusEndpoint).toBeUndefined();
    expect(getTelemetryState()).toMatchObject({ metricsExporting: false, tracesExporting: false });
    expect(warnings).toEqual([
      '@gym/otel-bootstrap: metrics not exporting: registering the MeterProvider with @opentelemetry/api failed (the global slot belongs to @opentelemetry/api 1.3.0)',
    ]);
    // Nothing of ours was left in the foreign slot.
    expect(holder[SLOT]).toEqual({ version: '1.3.0' });
    handle?.meter.createCounter('gym.test').add(1);
  });

  it('metrics and traces: one warning for both, every span-group gate shut', async () => {
    holder[SLOT] = { version: '1.3.0' };
    const warnings: string[] = [];
    const handle = await initTelemetry(options({ NEMO_GYM_OTEL_EXPORTER: 'console' }, warnings));
    expect(handle).toMatchObject({ metricsExporting: false, tracesExporting: false, isExporting: false });
    expect(getTelemetryState()?.spanGroups.size).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^@gym\/otel-bootstrap: metrics and traces not exporting: registering the MeterProvider .*; registering the TracerProvider /,
    );
  });

  it('the Prometheus endpoint of a refused MeterProvider is closed again', async () => {
    holder[SLOT] = { version: '1.3.0' };
    const { createServer } = await import('node:net');
    // Take a free port, free it, and ask the bootstrap for it: if the refused setup left its
    // server listening, this port stays taken.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    await initTelemetry(options({ ...PROMETHEUS, OTEL_EXPORTER_PROMETHEUS_PORT: String(port) }, []));
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('a provider registered through that copy is invisible here, so it is not "exporting" either', async () => {
    const theirs = new MeterProvider();
    holder[SLOT] = { version: '1.3.0', metrics: theirs };
    expect(metrics.getMeterProvider()).not.toBe(theirs); // what the libraries see
    const warnings: string[] = [];
    const handle = await initTelemetry(options(PROMETHEUS, warnings));
    expect(handle).toMatchObject({ metricsExporting: false, isExporting: false });
    expect(getTelemetryState()?.metricsExporting).toBe(false);
    expect(warnings).toEqual([
      '@gym/otel-bootstrap: metrics not exporting: a MeterProvider is registered through another copy of @opentelemetry/api that this one cannot use (the global slot belongs to @opentelemetry/api 1.3.0)',
    ]);
    await theirs.shutdown();
  });

  it('a tracer provider registered through that copy: traces not exporting, gates shut', async () => {
    holder[SLOT] = { version: '1.3.0', trace: { getTracer: () => undefined } };
    const warnings: string[] = [];
    const handle = await initTelemetry(options({ NEMO_GYM_OTEL_EXPORTER: 'none' }, warnings));
    expect(handle).toMatchObject({ tracesExporting: false, isExporting: false });
    expect(getTelemetryState()?.spanGroups.size).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('traces not exporting: a TracerProvider is registered through another copy');
  });
});

describe('a provider this API can see is reused: the handle says what is really in effect', () => {
  it('an SDK MeterProvider with a reader: exporting, and one warning naming what was not applied', async () => {
    const theirs = new MeterProvider({
      resource: resourceFromAttributes({ 'service.name': 'their-service' }),
      readers: [new PrometheusExporter({ preventServerStart: true })],
    });
    metrics.setGlobalMeterProvider(theirs);
    try {
      const warnings: string[] = [];
      const handle = await initTelemetry(options(PROMETHEUS, warnings));
      expect(handle).toMatchObject({
        metricsExporting: true,
        serviceName: 'nemo-gym/policy_model',
        gymResourceApplied: false,
      });
      expect(handle?.prometheusEndpoint).toBeUndefined();
      expect(getTelemetryState()?.metricsExporting).toBe(true);
      expect(warnings).toEqual([
        '@gym/otel-bootstrap: metrics go to a provider registered before initTelemetry, with its own resource and exporters; not applied there: the Gym resource attributes (service.name "nemo-gym/policy_model", nemo.run.id, nemo.gym.*) and the configured exporter (NEMO_GYM_OTEL_EXPORTER=prometheus)',
      ]);
    } finally {
      metrics.disable();
      await theirs.shutdown();
    }
  });

  it("an SDK MeterProvider is taken at its word: its readers are its own, never read from the SDK's private fields", async () => {
    const theirs = new MeterProvider();
    metrics.setGlobalMeterProvider(theirs);
    try {
      const warnings: string[] = [];
      const handle = await initTelemetry(options(PROMETHEUS, warnings));
      expect(handle).toMatchObject({ metricsExporting: true, isExporting: true, gymResourceApplied: false });
      expect(getTelemetryState()?.metricsExporting).toBe(true);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('metrics go to a provider registered before initTelemetry, with its own resource');
    } finally {
      metrics.disable();
      await theirs.shutdown();
    }
  });

  it("the API's no-op MeterProvider is not exporting; an SDK TracerProvider is taken at its word", async () => {
    // What the API hands out while nothing is registered: its own no-op provider.
    metrics.setGlobalMeterProvider(metrics.getMeterProvider());
    const tracerProvider = new SdkTracerProvider();
    trace.setGlobalTracerProvider(tracerProvider);
    try {
      const warnings: string[] = [];
      const handle = await initTelemetry(options({ NEMO_GYM_OTEL_EXPORTER: 'otlp' }, warnings));
      expect(handle).toMatchObject({ metricsExporting: false, tracesExporting: true, isExporting: true });
      expect(getTelemetryState()).toMatchObject({ metricsExporting: false, tracesExporting: true });
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^@gym\/otel-bootstrap: metrics and traces go to a provider registered before/);
    } finally {
      metrics.disable();
      trace.disable();
    }
  });

  it('our own providers, when the slot is ours: exporting, and shutdown leaves the slot empty', async () => {
    const warnings: string[] = [];
    const handle = await initTelemetry(options({ NEMO_GYM_OTEL_EXPORTER: 'console' }, warnings));
    expect(handle).toMatchObject({ metricsExporting: true, tracesExporting: true });
    expect(warnings).toEqual([]);
    // Registered: the slot holds both, and a span from the global API records.
    expect(holder[SLOT]?.metrics).toBeDefined();
    expect(holder[SLOT]?.trace).toBeDefined();
    const before = trace.getTracer('registration-test').startSpan('before');
    expect(before.isRecording()).toBe(true);
    before.end();
    await shutdownTelemetry();
    expect(holder[SLOT]?.metrics).toBeUndefined();
    expect(holder[SLOT]?.trace).toBeUndefined();
    // Unregistered: the global API is back to its no-op tracer.
    expect(trace.getTracer('registration-test').startSpan('after').isRecording()).toBe(false);
  });
});
