// "Off is free", proven in a real process: a child `node` loads the BUILT package with a
// module-resolution recorder preloaded (`--import`, see fixtures/record-imports.mjs) and
// the test reads back every module URL the child resolved. The enabled run is the control
// that shows the recorder does see SDK imports (including dynamic `import()`).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cleanEnv, DIST_ENTRY, fixture, requireBuild, runNode } from './helpers/child-node.js';

const work = mkdtempSync(join(tmpdir(), 'gym-otel-lazy-'));
let runs = 0;

beforeAll(() => requireBuild());
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs fixtures/server-process.mjs under the recorder; returns its result and the resolved URLs. */
async function runRecorded(env: NodeJS.ProcessEnv) {
  const record = join(work, `imports-${runs++}.txt`);
  const result = await runNode(
    ['--import', fixture('record-imports.mjs'), fixture('server-process.mjs'), 'lazy_server'],
    cleanEnv({ ...env, RECORD_IMPORTS_FILE: record }),
  );
  const loaded = readFileSync(record, 'utf8').split('\n').filter(Boolean);
  return { ...result, loaded };
}

const SDK = /\/node_modules\/@opentelemetry\/(?!api\/)/;
const ZOD = /\/node_modules\/zod\//;
/** @gym/observer, by its package path or its workspace folder (links resolve to the real path). */
const OBSERVER = /\/(?:@gym\/observer|packages\/observer)\//;

const heavy = (url: string): boolean => SDK.test(url) || ZOD.test(url) || OBSERVER.test(url);

describe('a disabled process imports no SDK', () => {
  it('telemetry off: not one @opentelemetry package besides the API, not zod, not the observer', async () => {
    const { code, stdout, stderr, loaded } = await runRecorded({});
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: 'null', stderr: '' });
    expect(loaded).toContain(DIST_ENTRY); // the recorder saw the package load: the check is not vacuous
    expect(loaded.filter(heavy)).toEqual([]);
  });

  it('explicitly off (NEMO_GYM_OTEL_ENABLED=0 beats NEMO_LENS_ENABLED=1): the same', async () => {
    const { stdout, loaded } = await runRecorded({ NEMO_GYM_OTEL_ENABLED: '0', NEMO_LENS_ENABLED: '1' });
    expect(stdout).toBe('null');
    expect(loaded.filter(heavy)).toEqual([]);
  });

  it('metrics on but the observer switched off: the observer is not loaded', async () => {
    const { code, stdout, loaded } = await runRecorded({
      NEMO_GYM_OTEL_ENABLED: '1',
      NEMO_GYM_OTEL_EXPORTER: 'prometheus',
      OTEL_EXPORTER_PROMETHEUS_PORT: '0',
      NEMO_GYM_OTEL_OBSERVER: '0',
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ metricsExporting: true });
    expect(loaded.filter((url) => OBSERVER.test(url))).toEqual([]);
  });

  it('control: an enabled process is seen loading the SDK, and only the signals it uses', async () => {
    const { code, stdout, loaded } = await runRecorded({
      NEMO_GYM_OTEL_ENABLED: '1',
      NEMO_GYM_OTEL_EXPORTER: 'prometheus',
      OTEL_EXPORTER_PROMETHEUS_PORT: '0',
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ metricsExporting: true, tracesExporting: false });
    const sdk = new Set(loaded.filter((url) => SDK.test(url)).map((url) => /@opentelemetry\/[^/]+/.exec(url)?.[0]));
    expect(sdk).toContain('@opentelemetry/sdk-metrics');
    expect(sdk).toContain('@opentelemetry/exporter-prometheus');
    expect(sdk).toContain('@opentelemetry/resources');
    expect(sdk).not.toContain('@opentelemetry/sdk-trace'); // Prometheus carries no traces
    expect(loaded.filter((url) => OBSERVER.test(url))).not.toEqual([]); // metrics export: the observer runs
  });
});

describe('the built package in a plain node process', () => {
  it('reports a malformed environment through process.emitWarning (stderr), and the server runs on', async () => {
    const { code, stdout, stderr } = await runNode(
      [fixture('server-process.mjs'), 'warned_server'],
      cleanEnv({ NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'zipkin' }),
    );
    expect(code).toBe(0);
    expect(stdout).toBe('null');
    expect(stderr).toContain(
      'GymTelemetryWarning: @gym/otel-bootstrap: telemetry is disabled: NEMO_GYM_OTEL_EXPORTER="zipkin" is not valid (allowed: one of otlp, console, prometheus, none, any case)',
    );
  });

  it('says so when a misspelt NEMO_GYM_OTEL_ENABLED leaves telemetry off: one warning with the closest name', async () => {
    const { code, stdout, stderr } = await runNode(
      [fixture('server-process.mjs'), 'misspelt_server'],
      cleanEnv({ NEMO_GYM_OTEL_ENABLD: '1' }),
    );
    expect(code).toBe(0);
    expect(stdout).toBe('null');
    expect(stderr.split('\n').filter((line) => line.includes('GymTelemetryWarning'))).toEqual([
      expect.stringContaining(
        'GymTelemetryWarning: @gym/otel-bootstrap: unknown NEMO_GYM_OTEL_* variables ignored: NEMO_GYM_OTEL_ENABLD (closest known: NEMO_GYM_OTEL_ENABLED)',
      ),
    ]);
  });

  it('can be require()d (no top-level await) and still set up the SDK lazily', async () => {
    const script = `
      const { initTelemetry, shutdownTelemetry } = require(${JSON.stringify(new URL(DIST_ENTRY).pathname)});
      initTelemetry({ serverName: 'cjs', serverType: 'resources_servers' })
        .then(async (handle) => { await shutdownTelemetry(); process.stdout.write(String(handle && handle.metricsExporting)); });`;
    const { code, stdout } = await runNode(
      ['--no-warnings', '-e', script],
      cleanEnv({
        NEMO_GYM_OTEL_ENABLED: '1',
        NEMO_GYM_OTEL_EXPORTER: 'prometheus',
        OTEL_EXPORTER_PROMETHEUS_PORT: '0',
      }),
    );
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'true' });
  });
});
