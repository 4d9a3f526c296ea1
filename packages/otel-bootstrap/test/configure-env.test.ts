import { describe, expect, it } from '@jest/globals';
import { configureTelemetryEnv, type TelemetryConfig } from '../src/index.js';

/** configureTelemetryEnv on a private env object, with its warnings collected. */
function configure(config: unknown, env: NodeJS.ProcessEnv): { runId: string | null; warnings: string[] } {
  const warnings: string[] = [];
  const runId = configureTelemetryEnv(config as Partial<TelemetryConfig> | null, env, {
    onWarning: (message) => warnings.push(message),
  });
  return { runId, warnings };
}

describe('configureTelemetryEnv: what it writes', () => {
  it('writes the effective settings of an enabled config, booleans as 1/0', () => {
    const env: NodeJS.ProcessEnv = { PATH: '/bin' };
    const { runId, warnings } = configure(
      { enabled: true, spanGroups: 'all', exporter: 'console', serviceName: 'my-gym' },
      env,
    );
    expect(warnings).toEqual([]);
    expect(env).toEqual({
      PATH: '/bin',
      NEMO_GYM_OTEL_ENABLED: '1',
      NEMO_GYM_OTEL_SPAN_GROUPS: 'all',
      NEMO_GYM_OTEL_TRACES_ENABLED: '1',
      NEMO_GYM_OTEL_METRICS_ENABLED: '1',
      NEMO_GYM_OTEL_EXPORTER: 'console',
      NEMO_GYM_OTEL_RUN_ID: runId,
      NEMO_GYM_OTEL_SERVICE_NAME_PER_SERVER: '1',
      NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS: '0',
      NEMO_GYM_OTEL_OBSERVER: '1',
      NEMO_GYM_OTEL_SHUTDOWN_TIMEOUT_MILLIS: '5000',
      OTEL_SERVICE_NAME: 'my-gym',
    });
  });

  it('returns the run id it wrote: 12 hex characters when nothing else is known', () => {
    const env: NodeJS.ProcessEnv = {};
    const { runId } = configure({ enabled: true }, env);
    expect(runId).toMatch(/^[0-9a-f]{12}$/);
    expect(env.NEMO_GYM_OTEL_RUN_ID).toBe(runId);
  });

  it('mints a different run id per fleet', () => {
    const first = configure({ enabled: true }, {}).runId;
    const second = configure({ enabled: true }, {}).runId;
    expect(first).not.toBe(second);
  });

  it('keeps one run id for the fleet: a second call returns the id the first one wrote', () => {
    const env: NodeJS.ProcessEnv = {};
    const first = configure({ enabled: true }, env).runId;
    expect(configure({ enabled: true }, env).runId).toBe(first);
  });

  it('an explicit NEMO_GYM_OTEL_RUN_ID is the run id', () => {
    const env: NodeJS.ProcessEnv = { NEMO_GYM_OTEL_RUN_ID: 'my-run' };
    expect(configure({ enabled: true }, env).runId).toBe('my-run');
    expect(env.NEMO_GYM_OTEL_RUN_ID).toBe('my-run');
  });

  it('NEMO_LENS_RUN_ID is used, and written under the NEMO_GYM_OTEL_ name', () => {
    const env: NodeJS.ProcessEnv = { NEMO_LENS_RUN_ID: 'lens-run' };
    expect(configure({ enabled: true }, env).runId).toBe('lens-run');
    expect(env).toMatchObject({ NEMO_LENS_RUN_ID: 'lens-run', NEMO_GYM_OTEL_RUN_ID: 'lens-run' });
  });

  it('SLURM_JOB_ID becomes the run id', () => {
    const env: NodeJS.ProcessEnv = { SLURM_JOB_ID: '123456' };
    expect(configure({ enabled: true }, env).runId).toBe('123456');
    expect(env.NEMO_GYM_OTEL_RUN_ID).toBe('123456');
  });

  it('a SLURM_JOB_ID that is not a usable run id is passed over for a minted one', () => {
    expect(configure({ enabled: true }, { SLURM_JOB_ID: 'has space' }).runId).toMatch(/^[0-9a-f]{12}$/);
  });

  it('config.runId comes before SLURM_JOB_ID, the environment before both', () => {
    expect(configure({ enabled: true, runId: 'from-config' }, { SLURM_JOB_ID: '1' }).runId).toBe('from-config');
    expect(configure({ enabled: true, runId: 'from-config' }, { NEMO_GYM_OTEL_RUN_ID: 'from-env' }).runId).toBe(
      'from-env',
    );
  });
});

describe('configureTelemetryEnv: set-default semantics', () => {
  it('never overwrites what the user set', () => {
    const env: NodeJS.ProcessEnv = {
      NEMO_GYM_OTEL_ENABLED: 'yes',
      NEMO_GYM_OTEL_SPAN_GROUPS: 'verify',
      OTEL_SERVICE_NAME: 'set-by-hand',
    };
    configure({ enabled: true, spanGroups: 'all', serviceName: 'my-gym', exporter: 'none' }, env);
    expect(env).toMatchObject({
      NEMO_GYM_OTEL_ENABLED: 'yes',
      NEMO_GYM_OTEL_SPAN_GROUPS: 'verify',
      OTEL_SERVICE_NAME: 'set-by-hand',
      NEMO_GYM_OTEL_EXPORTER: 'none',
    });
  });

  it('an explicit NEMO_GYM_OTEL_ENABLED=0 beats an enabled config, and nothing is written', () => {
    const env: NodeJS.ProcessEnv = {
      NEMO_GYM_OTEL_ENABLED: '0',
      NEMO_GYM_OTEL_SPAN_GROUPS: 'verify',
      OTEL_SERVICE_NAME: 'set-by-hand',
    };
    const before = { ...env };
    expect(configure({ enabled: true, spanGroups: 'all', serviceName: 'my-gym' }, env).runId).toBeNull();
    expect(env).toEqual(before);
  });

  it('NEMO_LENS_ENABLED=1 with an empty config enables the fleet: NEMO_GYM_OTEL_ENABLED=1 written, run id minted', () => {
    const env: NodeJS.ProcessEnv = { NEMO_LENS_ENABLED: '1' };
    const { runId } = configure(undefined, env);
    expect(runId).toMatch(/^[0-9a-f]{12}$/);
    expect(env).toMatchObject({ NEMO_LENS_ENABLED: '1', NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_RUN_ID: runId });
  });

  it('enabling through NEMO_LENS_ENABLED still carries the config block into the environment', () => {
    const env: NodeJS.ProcessEnv = { NEMO_LENS_ENABLED: 'true' };
    configure({ spanGroups: 'per_rollout', exporter: 'prometheus' }, env);
    expect(env).toMatchObject({ NEMO_GYM_OTEL_SPAN_GROUPS: 'per_rollout', NEMO_GYM_OTEL_EXPORTER: 'prometheus' });
  });

  it('a NEMO_LENS_* value wins over the config block and is handed down under the new name', () => {
    const env: NodeJS.ProcessEnv = { NEMO_LENS_EXPORTER: 'console' };
    configure({ enabled: true, exporter: 'otlp' }, env);
    expect(env.NEMO_GYM_OTEL_EXPORTER).toBe('console');
  });

  it('a blank variable counts as unset and gets the effective value', () => {
    const env: NodeJS.ProcessEnv = { NEMO_GYM_OTEL_EXPORTER: '  ' };
    configure({ enabled: true, exporter: 'none' }, env);
    expect(env.NEMO_GYM_OTEL_EXPORTER).toBe('none');
  });

  it('hands the observer switch and the shutdown deadline down to the fleet', () => {
    const env: NodeJS.ProcessEnv = {};
    configure({ enabled: true, observer: false, shutdownTimeoutMillis: 1500 }, env);
    expect(env).toMatchObject({ NEMO_GYM_OTEL_OBSERVER: '0', NEMO_GYM_OTEL_SHUTDOWN_TIMEOUT_MILLIS: '1500' });
  });

  it('leaves variables it does not own alone (Prometheus port, OTLP endpoint: per process or standard)', () => {
    const env: NodeJS.ProcessEnv = {};
    configure({ enabled: true, prometheusPort: 1234, otlpMetricsEndpoint: 'http://x/v1/metrics' }, env);
    expect(Object.keys(env).filter((name) => !name.startsWith('NEMO_GYM_OTEL_'))).toEqual(['OTEL_SERVICE_NAME']);
  });
});

describe('configureTelemetryEnv: disabled writes nothing', () => {
  const userEnv = (): NodeJS.ProcessEnv => ({
    PATH: '/usr/bin',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    NEMO_GYM_OTEL_SPAN_GROUPS: 'all',
  });

  it.each([
    ['a disabled config', { enabled: false, exporter: 'console' }],
    ['an empty config', {}],
    ['no config (null)', null],
    ['no config (undefined)', undefined],
  ])('%s → null, the environment exactly unchanged', (_name, config) => {
    const env = userEnv();
    const { runId, warnings } = configure(config, env);
    expect(runId).toBeNull();
    expect(env).toEqual(userEnv());
    expect(warnings).toEqual([]);
  });
});

describe('configureTelemetryEnv: malformed input disables the fleet with one warning', () => {
  it.each([
    [
      'an unknown exporter',
      { enabled: true, exporter: 'jaeger' },
      'config.exporter is not valid (allowed: one of otlp, console, prometheus, none, any case); got string "jaeger"',
    ],
    ['a boolean as a string', { enabled: 'yes' }, 'config.enabled is not valid (allowed: '],
    [
      'a negative interval',
      { enabled: true, sandboxResourceSampleIntervalSeconds: -1 },
      'config.sandboxResourceSampleIntervalSeconds is not valid (allowed: ',
    ],
    [
      'an interval below the floor',
      { enabled: true, sandboxResourceSampleIntervalSeconds: 0.05 },
      'config.sandboxResourceSampleIntervalSeconds is not valid (allowed: 0 (no sampling) or a plain decimal',
    ],
    [
      'a shutdown deadline of 0',
      { enabled: true, shutdownTimeoutMillis: 0 },
      'config.shutdownTimeoutMillis is not valid (allowed: a whole number of milliseconds from 1 to 600000); got number 0',
    ],
  ])('%s', (_name, config, message) => {
    const env: NodeJS.ProcessEnv = {};
    const { runId, warnings } = configure(config, env);
    expect(runId).toBeNull();
    expect(env).toEqual({});
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('@gym/otel-bootstrap: telemetry is disabled for the fleet: ');
    expect(warnings[0]).toContain(message);
  });

  it('a malformed environment value of an enabled fleet', () => {
    const env: NodeJS.ProcessEnv = { NEMO_GYM_OTEL_TRACES_ENABLED: 'maybe' };
    const { runId, warnings } = configure({ enabled: true }, env);
    expect(runId).toBeNull();
    expect(env).toEqual({ NEMO_GYM_OTEL_TRACES_ENABLED: 'maybe' });
    expect(warnings).toEqual([
      '@gym/otel-bootstrap: telemetry is disabled for the fleet: NEMO_GYM_OTEL_TRACES_ENABLED="maybe" is not valid (allowed: 1, true, yes, on (on) or 0, false, no, off (off), any case)',
    ]);
  });
});
