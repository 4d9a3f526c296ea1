import { GYM_VARIABLES } from '@gym/core/internal';
import { describe, expect, it } from '@jest/globals';
import { CONFIG_DEFAULTS, loadTelemetryConfig, type TelemetryConfig } from '../src/index.js';

function config(env: NodeJS.ProcessEnv): TelemetryConfig {
  const result = loadTelemetryConfig(env);
  if (!result.ok) throw new Error(`expected a config, got: ${result.error}`);
  return result.config;
}

function error(env: NodeJS.ProcessEnv): string {
  const result = loadTelemetryConfig(env);
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.config)}`);
  return result.error;
}

describe('loadTelemetryConfig: defaults', () => {
  it('an empty environment gives the documented defaults: disabled, nemo-gym, default groups, otlp, loopback', () => {
    expect(config({})).toEqual({
      enabled: false,
      spanGroups: 'default',
      tracesEnabled: true,
      metricsEnabled: true,
      exporter: 'otlp',
      runId: undefined,
      serviceNamePerServer: true,
      sandboxResourceSampleIntervalSeconds: 0,
      observer: true,
      shutdownTimeoutMillis: 5000,
      serviceName: 'nemo-gym',
      prometheusHost: '127.0.0.1',
      prometheusPort: 9464,
      metricExportIntervalMillis: 60000,
      metricExportTimeoutMillis: 30000,
      otlpTracesEndpoint: undefined,
      otlpMetricsEndpoint: undefined,
    });
    expect({ ...config({}), otlpTracesEndpoint: undefined, otlpMetricsEndpoint: undefined }).toEqual({
      ...CONFIG_DEFAULTS,
      otlpTracesEndpoint: undefined,
      otlpMetricsEndpoint: undefined,
    });
  });

  it('blank values count as unset', () => {
    expect(
      config({ NEMO_GYM_OTEL_EXPORTER: '  ', OTEL_SERVICE_NAME: '', NEMO_GYM_OTEL_SPAN_GROUPS: ' ' }),
    ).toMatchObject({
      exporter: 'otlp',
      serviceName: 'nemo-gym',
      spanGroups: 'default',
    });
  });

  it('reads every key it documents', () => {
    expect(
      config({
        NEMO_GYM_OTEL_ENABLED: 'yes',
        NEMO_GYM_OTEL_SPAN_GROUPS: 'per_rollout,sandbox',
        NEMO_GYM_OTEL_TRACES_ENABLED: 'off',
        NEMO_GYM_OTEL_METRICS_ENABLED: 'ON',
        NEMO_GYM_OTEL_EXPORTER: ' Prometheus ',
        NEMO_GYM_OTEL_RUN_ID: 'run-7',
        NEMO_GYM_OTEL_SERVICE_NAME_PER_SERVER: '0',
        NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS: '2.5',
        NEMO_GYM_OTEL_OBSERVER: 'no',
        NEMO_GYM_OTEL_SHUTDOWN_TIMEOUT_MILLIS: '250',
        OTEL_SERVICE_NAME: 'my-gym',
        OTEL_EXPORTER_PROMETHEUS_HOST: '0.0.0.0',
        OTEL_EXPORTER_PROMETHEUS_PORT: '0',
      }),
    ).toEqual({
      enabled: true,
      spanGroups: 'per_rollout,sandbox',
      tracesEnabled: false,
      metricsEnabled: true,
      exporter: 'prometheus',
      runId: 'run-7',
      serviceNamePerServer: false,
      sandboxResourceSampleIntervalSeconds: 2.5,
      observer: false,
      shutdownTimeoutMillis: 250,
      serviceName: 'my-gym',
      prometheusHost: '0.0.0.0',
      prometheusPort: 0,
      metricExportIntervalMillis: 60000,
      metricExportTimeoutMillis: 30000,
      otlpTracesEndpoint: undefined,
      otlpMetricsEndpoint: undefined,
    });
  });

  it('reads the export interval and timeout for the periodic exporters', () => {
    expect(
      config({
        NEMO_GYM_OTEL_EXPORTER: 'console',
        OTEL_METRIC_EXPORT_INTERVAL: '2000',
        OTEL_METRIC_EXPORT_TIMEOUT: '1000',
      }),
    ).toMatchObject({ metricExportIntervalMillis: 2000, metricExportTimeoutMillis: 1000 });
    expect(config({ OTEL_METRIC_EXPORT_INTERVAL: '3000', OTEL_METRIC_EXPORT_TIMEOUT: '1500' })).toMatchObject({
      metricExportIntervalMillis: 3000,
      metricExportTimeoutMillis: 1500,
    });
  });

  it.each([
    ['300', 300],
    ['1', 1],
    ['0999', 999],
  ])('accepts an export interval of %s ms, as OpenTelemetry does (any positive integer)', (text, millis) => {
    const result = loadTelemetryConfig({ OTEL_METRIC_EXPORT_INTERVAL: text });
    expect(result).toMatchObject({ ok: true, warnings: [] });
    expect((result as { config: TelemetryConfig }).config).toMatchObject({
      metricExportIntervalMillis: millis,
      metricExportTimeoutMillis: millis, // the SDK's rule: the timeout is capped at the interval
    });
  });

  it('accepts any positive export timeout (the SDK refuses 0), capped at the interval', () => {
    expect(config({ OTEL_METRIC_EXPORT_TIMEOUT: '50' }).metricExportTimeoutMillis).toBe(50);
    expect(config({ OTEL_METRIC_EXPORT_INTERVAL: '1000' }).metricExportTimeoutMillis).toBe(1000);
    expect(
      config({ OTEL_METRIC_EXPORT_INTERVAL: '300', OTEL_METRIC_EXPORT_TIMEOUT: '5000' }).metricExportTimeoutMillis,
    ).toBe(300);
  });

  it.each(['0', '-5', '1.5', '1e3', '0x10', 'abc'])('refuses an export interval or timeout of %j', (text) => {
    for (const name of ['OTEL_METRIC_EXPORT_INTERVAL', 'OTEL_METRIC_EXPORT_TIMEOUT']) {
      expect(error({ [name]: text })).toMatch(
        `${name}=${JSON.stringify(text)} is not valid (allowed: a positive whole`,
      );
    }
  });

  it('caps an interval longer than a Node timer can wait (Node would fire it after 1 ms), with a warning', () => {
    const result = loadTelemetryConfig({ OTEL_METRIC_EXPORT_INTERVAL: '3000000000' });
    expect(result).toMatchObject({
      ok: true,
      config: { metricExportIntervalMillis: 2147483647, metricExportTimeoutMillis: 30000 },
      warnings: [
        'OTEL_METRIC_EXPORT_INTERVAL=3000000000 is longer than a Node timer can wait; 2147483647 ms (about 24.8 days) is used',
      ],
    });
  });
});

describe('loadTelemetryConfig: NEMO_LENS_* fallback', () => {
  it('NEMO_LENS_ENABLED=1 alone enables telemetry', () => {
    expect(config({ NEMO_LENS_ENABLED: '1' }).enabled).toBe(true);
  });

  it('NEMO_GYM_OTEL_ENABLED=0 beats NEMO_LENS_ENABLED=1', () => {
    expect(config({ NEMO_GYM_OTEL_ENABLED: '0', NEMO_LENS_ENABLED: '1' }).enabled).toBe(false);
  });

  it('a blank NEMO_GYM_OTEL_* value falls back to NEMO_LENS_*', () => {
    expect(config({ NEMO_GYM_OTEL_ENABLED: ' ', NEMO_LENS_ENABLED: 'on' }).enabled).toBe(true);
  });

  // key → [NEMO_LENS_ value, its parse, NEMO_GYM_OTEL_ value, its parse]
  const samples: Record<keyof typeof GYM_VARIABLES, [string, unknown, string, unknown]> = {
    enabled: ['1', true, '0', false],
    spanGroups: ['all', 'all', 'verify', 'verify'],
    tracesEnabled: ['0', false, '1', true],
    metricsEnabled: ['0', false, 'yes', true],
    exporter: ['console', 'console', 'none', 'none'],
    runId: ['lens-run', 'lens-run', 'gym-run', 'gym-run'],
    serviceNamePerServer: ['0', false, '1', true],
    sandboxResourceSampleIntervalSeconds: ['3', 3, '4', 4],
    observer: ['0', false, 'on', true],
    shutdownTimeoutMillis: ['100', 100, '200', 200],
  };

  it.each(Object.keys(samples) as (keyof typeof samples)[])(
    '%s is read from NEMO_LENS_* when NEMO_GYM_OTEL_* is unset, and NEMO_GYM_OTEL_* wins',
    (key) => {
      const [primary, fallback] = GYM_VARIABLES[key].names;
      expect(fallback).toBe(primary.replace('NEMO_GYM_OTEL_', 'NEMO_LENS_'));
      const [lensValue, lensParsed, gymValue, gymParsed] = samples[key] as [string, unknown, string, unknown];
      expect(config({ [fallback]: lensValue })[key]).toEqual(lensParsed);
      expect(config({ [fallback]: lensValue, [primary]: gymValue })[key]).toEqual(gymParsed);
    },
  );

  it('span groups use the names @gym/constants reads when nobody published a state', () => {
    expect(GYM_VARIABLES.spanGroups.names).toEqual(['NEMO_GYM_OTEL_SPAN_GROUPS', 'NEMO_LENS_SPAN_GROUPS']);
  });
});

describe('loadTelemetryConfig: malformed values disable with one message', () => {
  it('names the variable, its value and what is allowed', () => {
    expect(error({ NEMO_GYM_OTEL_TRACES_ENABLED: 'maybe' })).toBe(
      'NEMO_GYM_OTEL_TRACES_ENABLED="maybe" is not valid (allowed: 1, true, yes, on (on) or 0, false, no, off (off), any case)',
    );
  });

  it('names the fallback variable when that is where the bad value came from', () => {
    expect(error({ NEMO_LENS_EXPORTER: 'jaeger' })).toBe(
      'NEMO_LENS_EXPORTER="jaeger" is not valid (allowed: one of otlp, console, prometheus, none, any case)',
    );
  });

  it('lists every bad variable in the one message', () => {
    const message = error({
      NEMO_GYM_OTEL_ENABLED: 'sure',
      NEMO_GYM_OTEL_EXPORTER: 'prometheus',
      NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS: '-1',
      OTEL_EXPORTER_PROMETHEUS_PORT: '65536',
    });
    expect(message.split('; ')).toEqual([
      expect.stringContaining('NEMO_GYM_OTEL_ENABLED="sure"'),
      expect.stringContaining('NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS="-1"'),
      expect.stringContaining('OTEL_EXPORTER_PROMETHEUS_PORT="65536"'),
    ]);
  });

  it.each([
    ['NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS', 'abc'],
    ['NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS', 'Infinity'],
    ['NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS', '2147484'],
    ['NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS', '1e1'],
    ['NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS', '0.05'],
    ['NEMO_GYM_OTEL_RUN_ID', 'has space'],
    ['NEMO_GYM_OTEL_SHUTDOWN_TIMEOUT_MILLIS', '0'],
    ['NEMO_GYM_OTEL_SHUTDOWN_TIMEOUT_MILLIS', '5s'],
    ['NEMO_GYM_OTEL_OBSERVER', 'maybe'],
    ['OTEL_METRIC_EXPORT_INTERVAL', '0'],
    ['OTEL_METRIC_EXPORT_TIMEOUT', '1.5'],
    ['OTEL_SERVICE_NAME', 'bad\u0007name'],
  ])('%s=%j is refused', (name, value) => {
    expect(error({ [name]: value })).toContain(`${name}=${JSON.stringify(value)} is not valid (allowed: `);
  });

  it.each([
    ['OTEL_EXPORTER_PROMETHEUS_PORT', '94.64'],
    ['OTEL_EXPORTER_PROMETHEUS_PORT', '-1'],
    ['OTEL_EXPORTER_PROMETHEUS_HOST', 'http://127.0.0.1'],
  ])('%s=%j is refused with the prometheus exporter', (name, value) => {
    expect(error({ NEMO_GYM_OTEL_EXPORTER: 'prometheus', [name]: value })).toContain(
      `${name}=${JSON.stringify(value)} is not valid (allowed: `,
    );
  });

  it('shows a huge value capped, with its length', () => {
    const message = error({ NEMO_GYM_OTEL_RUN_ID: 'x'.repeat(100_000) });
    expect(message.length).toBeLessThan(300);
    expect(message).toContain('(100000 chars)');
  });

  it('uses the one grammar of @gym/core: a value means the same here as in every library', () => {
    for (const [key, raw] of [
      ['sandboxResourceSampleIntervalSeconds', '1e1'],
      ['sandboxResourceSampleIntervalSeconds', ' 0.5 '],
      ['enabled', ' On '],
      ['shutdownTimeoutMillis', '600001'],
      ['exporter', 'PROMETHEUS'],
    ] as const) {
      const variable = GYM_VARIABLES[key];
      const result = loadTelemetryConfig({ [variable.names[0]]: raw });
      const expected = (variable.parse as (text: string) => unknown)(raw.trim());
      if (expected === undefined) expect(result.ok).toBe(false);
      else expect(result.ok && result.config[key]).toEqual(expected);
    }
  });
});

describe('loadTelemetryConfig: variables of an exporter not in use are ignored, never a reason to turn telemetry off', () => {
  const broken = {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'localhost:4318',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    OTEL_EXPORTER_PROMETHEUS_HOST: 'http://nope/',
    OTEL_EXPORTER_PROMETHEUS_PORT: 'ninety',
    OTEL_METRIC_EXPORT_INTERVAL: 'soon',
    OTEL_METRIC_EXPORT_TIMEOUT: '-5',
  };

  it.each([
    ['prometheus', ['OTEL_EXPORTER_PROMETHEUS_HOST', 'OTEL_EXPORTER_PROMETHEUS_PORT']],
    ['otlp', ['OTEL_EXPORTER_OTLP_', 'OTEL_METRIC_EXPORT_']],
    ['console', ['OTEL_METRIC_EXPORT_']],
    ['none', []],
  ])('exporter %s reads only its own variables', (exporter, own) => {
    const env: NodeJS.ProcessEnv = { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: exporter };
    for (const [name, value] of Object.entries(broken))
      if (own.some((prefix) => name.startsWith(prefix))) env[name] = value;
    // With only its own broken variables it is refused (the check is not vacuous) ...
    if (own.length > 0) expect(loadTelemetryConfig(env).ok).toBe(false);
    // ... and the other exporters' broken variables change nothing.
    const others = Object.fromEntries(
      Object.entries(broken).filter(([name]) => !own.some((prefix) => name.startsWith(prefix))),
    );
    expect(config({ NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: exporter, ...others })).toMatchObject({
      exporter,
      prometheusHost: '127.0.0.1',
      prometheusPort: 9464,
    });
  });

  it('a malformed OTEL_EXPORTER_OTLP_ENDPOINT with EXPORTER=prometheus', () => {
    expect(
      config({ NEMO_GYM_OTEL_EXPORTER: 'prometheus', OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' }).exporter,
    ).toBe('prometheus');
  });

  it('a malformed OTEL_EXPORTER_PROMETHEUS_PORT with the default otlp exporter', () => {
    expect(config({ OTEL_EXPORTER_PROMETHEUS_PORT: 'ninety' })).toMatchObject({
      exporter: 'otlp',
      prometheusPort: 9464,
    });
  });

  it('the Prometheus variables with metrics switched off', () => {
    expect(
      config({
        NEMO_GYM_OTEL_EXPORTER: 'prometheus',
        NEMO_GYM_OTEL_METRICS_ENABLED: '0',
        OTEL_EXPORTER_PROMETHEUS_PORT: 'x',
      }).metricsEnabled,
    ).toBe(false);
  });

  it('a malformed exporter is named alone, not followed by complaints about variables it would have used', () => {
    expect(error({ NEMO_GYM_OTEL_EXPORTER: 'zipkin', OTEL_EXPORTER_OTLP_ENDPOINT: 'nope' })).toBe(
      'NEMO_GYM_OTEL_EXPORTER="zipkin" is not valid (allowed: one of otlp, console, prometheus, none, any case)',
    );
  });
});

describe('loadTelemetryConfig: OTLP variables (exporter otlp)', () => {
  it('appends the signal paths to OTEL_EXPORTER_OTLP_ENDPOINT, with or without a trailing slash', () => {
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toMatchObject({
      otlpTracesEndpoint: 'http://collector:4318/v1/traces',
      otlpMetricsEndpoint: 'http://collector:4318/v1/metrics',
    });
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector/prefix/' })).toMatchObject({
      otlpTracesEndpoint: 'https://collector/prefix/v1/traces',
      otlpMetricsEndpoint: 'https://collector/prefix/v1/metrics',
    });
  });

  it('appends the signal path to the path of an endpoint with a query string, not inside the query', () => {
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4318/base?tenant=a&x=1' })).toMatchObject({
      otlpTracesEndpoint: 'https://collector:4318/base/v1/traces?tenant=a&x=1',
      otlpMetricsEndpoint: 'https://collector:4318/base/v1/metrics?tenant=a&x=1',
    });
  });

  it('uses signal-specific endpoints as they are', () => {
    expect(
      config({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://metrics:9000/custom',
      }),
    ).toMatchObject({
      otlpTracesEndpoint: 'http://collector:4318/v1/traces',
      otlpMetricsEndpoint: 'http://metrics:9000/custom',
    });
  });

  it('resolves no URL for a disabled signal', () => {
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', NEMO_GYM_OTEL_TRACES_ENABLED: '0' })).toMatchObject({
      otlpTracesEndpoint: undefined,
      otlpMetricsEndpoint: 'http://c:4318/v1/metrics',
    });
  });

  it('refuses a malformed endpoint and any protocol but http/protobuf', () => {
    expect(error({ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' })).toBe(
      'OTEL_EXPORTER_OTLP_ENDPOINT="localhost:4318" is not valid (allowed: an http or https URL; v1/traces and v1/metrics are appended to its path)',
    );
    expect(error({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe(
      'OTEL_EXPORTER_OTLP_PROTOCOL="grpc" is not valid (allowed: http/protobuf (the only OTLP transport this package ships))',
    );
    expect(error({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })).toContain(
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/json"',
    );
    expect(config({ OTEL_EXPORTER_OTLP_PROTOCOL: ' HTTP/PROTOBUF ' }).exporter).toBe('otlp');
  });

  it('ignores OTLP variables when another exporter is chosen', () => {
    expect(
      config({
        NEMO_GYM_OTEL_EXPORTER: 'prometheus',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toMatchObject({ exporter: 'prometheus', otlpTracesEndpoint: undefined, otlpMetricsEndpoint: undefined });
  });
});

describe('loadTelemetryConfig: the standard off-switches win over NEMO_GYM_OTEL_*', () => {
  it.each(['true', 'TRUE', ' True '])('OTEL_SDK_DISABLED=%j turns telemetry off', (value) => {
    expect(config({ NEMO_GYM_OTEL_ENABLED: '1', OTEL_SDK_DISABLED: value }).enabled).toBe(false);
  });

  it.each(['false', '1', 'yes', ''])('OTEL_SDK_DISABLED=%j leaves it on (only `true` disables)', (value) => {
    expect(config({ NEMO_GYM_OTEL_ENABLED: '1', OTEL_SDK_DISABLED: value }).enabled).toBe(true);
  });

  it.each(['1', 'yes', ' on ', 'disabled'])('OTEL_SDK_DISABLED=%j: one warning that only `true` counts', (value) => {
    expect(loadTelemetryConfig({ NEMO_GYM_OTEL_ENABLED: '1', OTEL_SDK_DISABLED: value }).warnings).toEqual([
      `OTEL_SDK_DISABLED=${JSON.stringify(value)} leaves telemetry on: only \`true\` (any case) disables it, as the OpenTelemetry specification says`,
    ]);
  });

  it.each(['true', ' FALSE ', 'False', ''])('OTEL_SDK_DISABLED=%j: no warning', (value) => {
    expect(loadTelemetryConfig({ NEMO_GYM_OTEL_ENABLED: '1', OTEL_SDK_DISABLED: value }).warnings).toEqual([]);
  });

  it('OTEL_METRICS_EXPORTER=none and OTEL_TRACES_EXPORTER=none turn that signal off, whatever NEMO_GYM_OTEL_* says', () => {
    const on = { NEMO_GYM_OTEL_METRICS_ENABLED: '1', NEMO_GYM_OTEL_TRACES_ENABLED: '1' };
    expect(config({ ...on, OTEL_METRICS_EXPORTER: 'none' })).toMatchObject({
      metricsEnabled: false,
      tracesEnabled: true,
    });
    expect(config({ ...on, OTEL_TRACES_EXPORTER: 'NONE' })).toMatchObject({
      metricsEnabled: true,
      tracesEnabled: false,
    });
    // Any other value is left to NEMO_GYM_OTEL_EXPORTER.
    expect(config({ ...on, OTEL_METRICS_EXPORTER: 'otlp,none' })).toMatchObject({ metricsEnabled: true });
  });
});

describe('loadTelemetryConfig: unknown NEMO_GYM_OTEL_* names', () => {
  it('one warning lists them, sorted, each with the closest known name; the value is not used', () => {
    const result = loadTelemetryConfig({
      NEMO_GYM_OTEL_ENABLED: '1',
      NEMO_GYM_OTEL_EXPORTR: 'prometheus',
      NEMO_GYM_OTEL_SPANGROUPS: 'all',
      nemo_gym_otel_run_id: 'lower-case',
      NEMO_GYM_OTEL_OBSERVRE: '0',
    });
    expect(result).toMatchObject({ ok: true, config: { exporter: 'otlp', spanGroups: 'default', observer: true } });
    expect(result.warnings).toEqual([
      'unknown NEMO_GYM_OTEL_* variables ignored: NEMO_GYM_OTEL_EXPORTR (closest known: NEMO_GYM_OTEL_EXPORTER), ' +
        'NEMO_GYM_OTEL_OBSERVRE (closest known: NEMO_GYM_OTEL_OBSERVER), ' +
        'NEMO_GYM_OTEL_SPANGROUPS (closest known: NEMO_GYM_OTEL_SPAN_GROUPS), ' +
        'nemo_gym_otel_run_id (closest known: NEMO_GYM_OTEL_RUN_ID)',
    ]);
  });

  it('every known name, a blank unknown one, NEMO_LENS_* and other prefixes: no warning', () => {
    const known = Object.fromEntries(Object.values(GYM_VARIABLES).map((variable) => [variable.names[0], ' ']));
    expect(
      loadTelemetryConfig({
        ...known,
        NEMO_GYM_OTEL_EXPORTR: '  ',
        NEMO_LENS_EXPORTR: 'x',
        NEMO_GYM_OTELX: 'y',
        OTEL_EXPORTR: 'z',
      }).warnings,
    ).toEqual([]);
  });

  it('comes with a malformed config too, and shows at most 10 names, printable and short', () => {
    const env: NodeJS.ProcessEnv = { NEMO_GYM_OTEL_TRACES_ENABLED: 'maybe' };
    for (let i = 0; i < 12; i++) env[`NEMO_GYM_OTEL_X${String(i).padStart(2, '0')}`] = '1';
    env[`NEMO_GYM_OTEL_\u0007${'Y'.repeat(100)}`] = '1';
    const result = loadTelemetryConfig(env);
    expect(result.ok).toBe(false);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(/^unknown NEMO_GYM_OTEL_\* variables ignored: NEMO_GYM_OTEL_\?Y+… \(closest/);
    expect(result.warnings[0]).toMatch(/NEMO_GYM_OTEL_X08 \(closest known: [A-Z_]+\) and 3 more$/);
  });
});
