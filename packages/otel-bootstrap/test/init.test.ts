import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { getTelemetryState } from '@gym/core';
import { createMetricHarness, createSpanHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { type MeterProvider as ApiMeterProvider, metrics, type ProxyTracerProvider, trace } from '@opentelemetry/api';
import type { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { TracerProvider as SdkTracerProvider } from '@opentelemetry/sdk-trace';
import { getTelemetry, type InitTelemetryOptions, initTelemetry, shutdownTelemetry } from '../src/index.js';
import { isGloballyRegistered } from '../src/otel-globals.js';
import { resetTelemetryForTesting } from '../src/telemetry.js';
import { type ConsoleCapture, captureConsole } from './helpers/console-capture.js';
import { captureDiag, resetDiag } from './helpers/diag.js';
import { scrape, targetInfo } from './helpers/prometheus-text.js';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;

/** An environment that turns telemetry on with a Prometheus endpoint on an ephemeral loopback port. */
function prometheusEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    NEMO_GYM_OTEL_ENABLED: '1',
    NEMO_GYM_OTEL_EXPORTER: 'prometheus',
    OTEL_EXPORTER_PROMETHEUS_PORT: '0',
    ...extra,
  };
}

function options(overrides: Partial<InitTelemetryOptions> & { warnings?: string[] } = {}): InitTelemetryOptions {
  const { warnings, ...rest } = overrides;
  return {
    serverName: 'policy_model',
    serverType: 'responses_api_models',
    env: {},
    onWarning: (message) => warnings?.push(message),
    ...rest,
  };
}

let printed: ConsoleCapture;
beforeEach(() => {
  printed = captureConsole();
});

afterEach(async () => {
  await resetTelemetryForTesting();
  resetDiag();
  printed.restore();
});

describe('initTelemetry: off', () => {
  it('returns null when disabled; getTelemetry() is null; the published state says nothing exports', async () => {
    const warnings: string[] = [];
    await expect(initTelemetry(options({ env: {}, warnings }))).resolves.toBeNull();
    expect(getTelemetry()).toBeNull();
    expect(getTelemetryState()).toMatchObject({ metricsExporting: false, tracesExporting: false, orchestrator: false });
    expect(getTelemetryState()?.spanGroups.size).toBe(0);
    expect(isGloballyRegistered('metrics')).toBe(false);
    expect(isGloballyRegistered('trace')).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('an invalid environment disables rather than crashing the server: null, one warning naming the variable', async () => {
    const warnings: string[] = [];
    const handle = await initTelemetry(
      options({ env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_TRACES_ENABLED: 'maybe' }, warnings }),
    );
    expect(handle).toBeNull();
    expect(warnings).toEqual([
      '@gym/otel-bootstrap: telemetry is disabled: NEMO_GYM_OTEL_TRACES_ENABLED="maybe" is not valid (allowed: 1, true, yes, on (on) or 0, false, no, off (off), any case)',
    ]);
    expect(getTelemetryState()?.metricsExporting).toBe(false);
  });

  it('a malformed master switch is reported too (NEMO_GYM_OTEL_ENABLED=ture)', async () => {
    const warnings: string[] = [];
    await expect(initTelemetry(options({ env: { NEMO_GYM_OTEL_ENABLED: 'ture' }, warnings }))).resolves.toBeNull();
    expect(warnings).toEqual([expect.stringContaining('NEMO_GYM_OTEL_ENABLED="ture" is not valid')]);
  });

  it('a setup failure is swallowed: a taken Prometheus port → null, one warning, nothing left registered', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const warnings: string[] = [];
      const handle = await initTelemetry(
        options({ env: prometheusEnv({ OTEL_EXPORTER_PROMETHEUS_PORT: String(port) }), warnings }),
      );
      expect(handle).toBeNull();
      expect(getTelemetry()).toBeNull();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^@gym\/otel-bootstrap: telemetry is disabled: setup failed \(.*EADDRINUSE/);
      expect(isGloballyRegistered('metrics')).toBe(false);
      expect(getTelemetryState()?.metricsExporting).toBe(false);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('is idempotent even when disabled: the first answer stands after the environment changes', async () => {
    const env: NodeJS.ProcessEnv = {};
    await expect(initTelemetry(options({ env }))).resolves.toBeNull();
    env.NEMO_GYM_OTEL_ENABLED = '1';
    await expect(initTelemetry(options({ env: prometheusEnv() }))).resolves.toBeNull();
    expect(getTelemetry()).toBeNull();
    expect(isGloballyRegistered('metrics')).toBe(false);
  });

  it('exporter none: a silent handle (nothing exports, no SDK registered)', async () => {
    const handle = await initTelemetry(
      options({ env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'none' } }),
    );
    expect(handle).toMatchObject({ isExporting: false, metricsExporting: false, tracesExporting: false });
    expect(isGloballyRegistered('metrics')).toBe(false);
    expect(isGloballyRegistered('trace')).toBe(false);
    expect(getTelemetryState()?.spanGroups.size).toBe(0);
    handle?.meter.createCounter('gym.test').add(1);
    handle?.tracer.startSpan('nothing').end();
  });
});

describe('initTelemetry: on', () => {
  it('builds an exporting handle (console exporter) and getTelemetry() returns it', async () => {
    const handle = await initTelemetry(
      options({ env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'console' } }),
    );
    expect(handle).not.toBeNull();
    expect(handle).toMatchObject({ isExporting: true, metricsExporting: true, tracesExporting: true });
    expect(getTelemetry()).toBe(handle);
    expect(Object.isFrozen(handle)).toBe(true);
    handle?.tracer.startSpan('gym.test.printed').end();
    // The console exporter really writes (here into the capture, not the test output).
    expect(JSON.stringify(printed.calls.flat())).toContain('gym.test.printed');
    expect(getTelemetryState()).toMatchObject({ metricsExporting: true, tracesExporting: true });
    expect(isGloballyRegistered('metrics')).toBe(true);
    expect(isGloballyRegistered('trace')).toBe(true);
    expect(isGloballyRegistered('context')).toBe(true);
    expect(isGloballyRegistered('propagation')).toBe(true);
  });

  it('suffixes the service name per server and sets the Gym resource attributes', async () => {
    const handle = await initTelemetry(
      options({ env: prometheusEnv({ OTEL_SERVICE_NAME: 'nemo-gym', NEMO_GYM_OTEL_RUN_ID: 'run-42' }) }),
    );
    expect(handle?.serviceName).toBe('nemo-gym/policy_model');
    const labels = targetInfo(await scrape(handle?.prometheusEndpoint as string));
    expect(labels).toMatchObject({
      service_name: 'nemo-gym/policy_model',
      nemo_gym_service_group: 'nemo-gym',
      nemo_gym_server_name: 'policy_model',
      nemo_gym_server_type: 'responses_api_models',
      nemo_gym_version: VERSION,
      nemo_run_id: 'run-42',
    });
  });

  it('service-name suffixing can be switched off', async () => {
    const handle = await initTelemetry(
      options({ env: prometheusEnv({ OTEL_SERVICE_NAME: 'nemo-gym', NEMO_GYM_OTEL_SERVICE_NAME_PER_SERVER: '0' }) }),
    );
    expect(handle?.serviceName).toBe('nemo-gym');
    const labels = targetInfo(await scrape(handle?.prometheusEndpoint as string));
    expect(labels).toMatchObject({ service_name: 'nemo-gym', nemo_gym_server_name: 'policy_model' });
  });

  it("merges the caller's resource attributes under the Gym ones", async () => {
    const handle = await initTelemetry(
      options({
        env: prometheusEnv(),
        resourceAttributes: { 'deployment.environment.name': 'test', 'nemo.gym.server.name': 'spoofed' },
      }),
    );
    const labels = targetInfo(await scrape(handle?.prometheusEndpoint as string));
    expect(labels).toMatchObject({
      deployment_environment_name: 'test',
      nemo_gym_server_name: 'policy_model',
      nemo_gym_version: VERSION,
    });
  });

  it.each([
    ['NEMO_GYM_OTEL_RUN_ID', { NEMO_GYM_OTEL_RUN_ID: 'from-env', SLURM_JOB_ID: '99' }, 'from-env'],
    ['SLURM_JOB_ID', { SLURM_JOB_ID: '123456' }, '123456'],
  ])('takes the run id from %s', async (_source, extra, expected) => {
    const handle = await initTelemetry(options({ env: prometheusEnv(extra) }));
    expect(handle?.config.runId).toBe(expected);
    expect(targetInfo(await scrape(handle?.prometheusEndpoint as string)).nemo_run_id).toBe(expected);
  });

  it('mints a 12-hex run id when none is known', async () => {
    const handle = await initTelemetry(options({ env: prometheusEnv() }));
    expect(handle?.config.runId).toMatch(/^[0-9a-f]{12}$/);
  });

  it('binds the Prometheus endpoint on loopback by default', async () => {
    const handle = await initTelemetry(options({ env: prometheusEnv() }));
    expect(handle?.prometheusEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(handle?.config.prometheusHost).toBe('127.0.0.1');
  });

  it('publishes whether this process is the orchestrator', async () => {
    await initTelemetry(options({ serverType: 'orchestrator', serverName: 'orchestrator', env: prometheusEnv() }));
    expect(getTelemetryState()).toMatchObject({ orchestrator: true, metricsExporting: true, tracesExporting: false });
  });

  it('metrics switched off: a no-op meter, metricsExporting false', async () => {
    const handle = await initTelemetry(
      options({
        env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'console', NEMO_GYM_OTEL_METRICS_ENABLED: '0' },
      }),
    );
    expect(handle).toMatchObject({ metricsExporting: false, tracesExporting: true, isExporting: true });
    expect(isGloballyRegistered('metrics')).toBe(false);
    expect(getTelemetryState()?.metricsExporting).toBe(false);
  });
});

describe('initTelemetry: what the environment says but does not mean', () => {
  it('a misspelt NEMO_GYM_OTEL_EXPORTR: telemetry as configured without it, and one warning naming the closest known name', async () => {
    const warnings: string[] = [];
    const handle = await initTelemetry(
      options({ env: prometheusEnv({ NEMO_GYM_OTEL_EXPORTR: 'console', NEMO_GYM_OTEL_SPAN_GROUP: 'all' }), warnings }),
    );
    expect(handle).toMatchObject({ metricsExporting: true, config: { exporter: 'prometheus', spanGroups: 'default' } });
    expect(warnings).toEqual([
      '@gym/otel-bootstrap: unknown NEMO_GYM_OTEL_* variables ignored: ' +
        'NEMO_GYM_OTEL_EXPORTR (closest known: NEMO_GYM_OTEL_EXPORTER), ' +
        'NEMO_GYM_OTEL_SPAN_GROUP (closest known: NEMO_GYM_OTEL_SPAN_GROUPS)',
    ]);
  });

  it('OTEL_SDK_DISABLED=1: telemetry stays on (only `true` disables it), and one warning says so', async () => {
    const warnings: string[] = [];
    const handle = await initTelemetry(options({ env: prometheusEnv({ OTEL_SDK_DISABLED: '1' }), warnings }));
    expect(handle).toMatchObject({ metricsExporting: true });
    expect(isGloballyRegistered('metrics')).toBe(true);
    expect(warnings).toEqual([
      '@gym/otel-bootstrap: OTEL_SDK_DISABLED="1" leaves telemetry on: only `true` (any case) disables it, as the OpenTelemetry specification says',
    ]);
  });
});

describe('initTelemetry: once per process', () => {
  it('two calls return the same handle', async () => {
    const first = await initTelemetry(options({ env: prometheusEnv() }));
    const second = await initTelemetry(options({ serverName: 'other', env: prometheusEnv() }));
    expect(first).not.toBeNull();
    expect(second).toBe(first);
  });

  it('16 concurrent calls produce exactly one setup', async () => {
    const logged = captureDiag();
    const handles = await Promise.all(
      Array.from({ length: 16 }, (_, index) =>
        initTelemetry(options({ serverName: `server_${index}`, env: prometheusEnv() })),
      ),
    );
    expect(new Set(handles).size).toBe(1);
    expect(handles[0]?.serviceName).toBe('nemo-gym/server_0');
    // A second setup would have tried to register a second MeterProvider (diag error).
    expect(logged.lines('warn')).toEqual([]);
  });

  it('fails fast on programming errors, without using up the first answer', async () => {
    await expect(
      initTelemetry({ serverName: 'x', serverType: 'bogus' as never, env: prometheusEnv() }),
    ).rejects.toThrow(
      new RangeError(
        'initTelemetry: options.serverType must be one of "resources_servers", "responses_api_agents", "responses_api_models", "orchestrator"; got string "bogus"',
      ),
    );
    await expect(initTelemetry({ serverName: ' ', serverType: 'resources_servers' })).rejects.toThrow(
      new TypeError('initTelemetry: options.serverName must be a non-empty string; got string " "'),
    );
    // A value that merely converts to a server type is not one.
    await expect(
      initTelemetry({ serverName: 'x', serverType: ['orchestrator'] as never, env: prometheusEnv() }),
    ).rejects.toThrow(RangeError);
    await expect(initTelemetry(undefined as never)).rejects.toThrow(TypeError);
    await expect(initTelemetry(options({ env: prometheusEnv() }))).resolves.not.toBeNull();
  });
});

describe('initTelemetry: a throwing warning handler', () => {
  it('a throwing onWarning never reaches the server', async () => {
    const handle = await initTelemetry(
      options({
        env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'zipkin' },
        onWarning: () => {
          throw new Error('logger down');
        },
      }),
    );
    expect(handle).toBeNull();
  });
});

describe('initTelemetry: an SDK registered by someone else', () => {
  it('is reused for metrics (exporting handle, no second setup) and left running after shutdown', async () => {
    const harness = createMetricHarness();
    const theirs = harness.meterProvider;
    metrics.setGlobalMeterProvider(theirs as unknown as ApiMeterProvider);
    try {
      // (The observer, which would also run on their provider, is off to keep the names exact.)
      const handle = await initTelemetry(options({ env: prometheusEnv({ NEMO_GYM_OTEL_OBSERVER: '0' }) }));
      expect(handle).toMatchObject({ metricsExporting: true, isExporting: true });
      expect(handle?.prometheusEndpoint).toBeUndefined();
      handle?.meter.createCounter('gym.test.before').add(2);
      await shutdownTelemetry();
      expect(metrics.getMeterProvider()).toBe(theirs);
      theirs.getMeter('after').createCounter('gym.test.after').add(3);
      expect([...(await harness.collect()).keys()].sort()).toEqual(['gym.test.after', 'gym.test.before']);
    } finally {
      await harness.shutdown();
      metrics.disable();
    }
  });

  it('is reused for traces, and the Gym span groups are still enabled', async () => {
    const theirs = createSpanHarness();
    trace.setGlobalTracerProvider(theirs.tracerProvider);
    try {
      const handle = await initTelemetry(
        options({ env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'none' } }),
      );
      expect(handle).toMatchObject({ tracesExporting: true, metricsExporting: false });
      expect(getTelemetryState()?.spanGroups.has('server')).toBe(true);
      expect(getTelemetryState()?.spanGroups.has('http_client')).toBe(true);
      handle?.tracer.startSpan('gym.rollout').end();
      expect(theirs.spans().map((span) => span.name)).toEqual(['gym.rollout']);
      await shutdownTelemetry();
      trace.getTracer('after').startSpan('after.shutdown').end();
      expect(theirs.spans().map((span) => span.name)).toEqual(['gym.rollout', 'after.shutdown']);
    } finally {
      await theirs.shutdown();
      trace.disable();
    }
  });
});

describe('shutdownTelemetry', () => {
  it('without init is a no-op (and init still works afterwards)', async () => {
    await expect(shutdownTelemetry()).resolves.toBeUndefined();
    await expect(initTelemetry(options({ env: prometheusEnv() }))).resolves.not.toBeNull();
  });

  it('is idempotent, and ends telemetry for the process', async () => {
    const handle = await initTelemetry(options({ env: prometheusEnv() }));
    const first = shutdownTelemetry();
    expect(shutdownTelemetry()).toBe(first);
    await first;
    await expect(shutdownTelemetry()).resolves.toBeUndefined();
    expect(getTelemetry()).toBeNull();
    await expect(initTelemetry(options({ env: prometheusEnv() }))).resolves.toBeNull();
    expect(getTelemetryState()).toMatchObject({ metricsExporting: false, tracesExporting: false });
    expect(isGloballyRegistered('metrics')).toBe(false);
    await expect(fetch(handle?.prometheusEndpoint as string)).rejects.toThrow();
  });

  it('swallows provider errors (one warning) and still releases the globals', async () => {
    const warnings: string[] = [];
    await initTelemetry(options({ env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'console' }, warnings }));
    const meterProvider = metrics.getMeterProvider() as MeterProvider;
    const realShutdown = meterProvider.shutdown.bind(meterProvider);
    meterProvider.shutdown = () => {
      throw new Error('meter shutdown failed');
    };
    const tracerProvider = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as SdkTracerProvider;
    tracerProvider.forceFlush = () => Promise.reject(new Error('span flush failed'));
    try {
      await expect(shutdownTelemetry()).resolves.toBeUndefined();
      expect(warnings).toEqual([
        '@gym/otel-bootstrap: telemetry shutdown met 2 error(s): Error: meter shutdown failed; Error: span flush failed',
      ]);
      expect(getTelemetry()).toBeNull();
      expect(isGloballyRegistered('trace')).toBe(false);
      expect(isGloballyRegistered('metrics')).toBe(false);
    } finally {
      // The provider that refused to shut down still runs its periodic console export: stop it,
      // or it prints into later test files of this jest worker.
      await realShutdown();
    }
  });

  it('a failing meter provider still lets the Prometheus endpoint go', async () => {
    const warnings: string[] = [];
    const handle = await initTelemetry(options({ env: prometheusEnv(), warnings }));
    const meterProvider = metrics.getMeterProvider() as MeterProvider;
    const realShutdown = meterProvider.shutdown.bind(meterProvider);
    meterProvider.shutdown = () => Promise.reject(new Error('boom'));
    try {
      await shutdownTelemetry();
      expect(warnings).toEqual([expect.stringContaining('Error: boom')]);
      await expect(fetch(handle?.prometheusEndpoint as string)).rejects.toThrow();
    } finally {
      await realShutdown();
    }
  });
});
