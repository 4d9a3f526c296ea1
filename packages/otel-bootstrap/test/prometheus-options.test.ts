// The `prometheus` option of initTelemetry: a bad value is a programming error, refused at
// once (also with telemetry off, before anything is decided) with a message naming the
// option, the value and what is allowed; a good value reaches the endpoint (seen through its 408 answer, which names the deadlines).

import { afterEach, describe, expect, it } from '@jest/globals';
import { initTelemetry } from '../src/index.js';
import { checkPrometheusLimits, PROMETHEUS_LIMITS_DEFAULTS } from '../src/prometheus-limits.js';
import { resetTelemetryForTesting } from '../src/telemetry.js';
import { openRaw, readResponse } from './helpers/raw-http.js';

const ON = { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: '0' };
const OFF = { NEMO_GYM_OTEL_ENABLED: '0' };

afterEach(async () => {
  await resetTelemetryForTesting();
});

const init = (prometheus: unknown, env: NodeJS.ProcessEnv = OFF) =>
  initTelemetry({
    serverName: 'prom',
    serverType: 'resources_servers',
    env,
    onWarning: () => {},
    prometheus: prometheus as never,
  });

describe('the prometheus option is checked at once', () => {
  it.each([
    [
      { headersTimeoutMs: -1 },
      RangeError,
      'initTelemetry: options.prometheus.headersTimeoutMs must be a whole number of milliseconds from 1 to 600000; got number -1',
    ],
    [
      { headersTimeoutMs: 0 },
      RangeError,
      'headersTimeoutMs must be a whole number of milliseconds from 1 to 600000; got number 0',
    ],
    [
      { requestTimeoutMs: Number.NaN },
      RangeError,
      'requestTimeoutMs must be a whole number of milliseconds from 1 to 600000; got number NaN',
    ],
    [
      { keepAliveTimeoutMs: Number.POSITIVE_INFINITY },
      RangeError,
      'keepAliveTimeoutMs must be a whole number of milliseconds from 1 to 600000; got number Infinity',
    ],
    [{ keepAliveTimeoutMs: 1.5 }, RangeError, 'got number 1.5'],
    [{ headersTimeoutMs: 2 ** 53 }, RangeError, 'got number 9007199254740992'],
    [
      { maxConnections: 0 },
      RangeError,
      'maxConnections must be a whole number of connections from 1 to 65536; got number 0',
    ],
    [{ maxConnections: 65_537 }, RangeError, 'got number 65537'],
    [
      { maxConnections: '64' },
      RangeError,
      'maxConnections must be a whole number of connections from 1 to 65536; got string "64"',
    ],
    [{ headersTimeoutMs: 10n }, RangeError, 'got bigint 10'],
    [
      { headersTimeoutMs: 20_000 },
      RangeError,
      'initTelemetry: options.prometheus.requestTimeoutMs (the default) must be at least headersTimeoutMs (20000); got number 10000',
    ],
    [
      { headersTimeoutMs: 300, requestTimeoutMs: 200 },
      RangeError,
      'options.prometheus.requestTimeoutMs must be at least headersTimeoutMs (300); got number 200',
    ],
  ])('refuses %p', async (value, kind, message) => {
    const attempt = init(value);
    await expect(attempt).rejects.toBeInstanceOf(kind);
    await expect(attempt).rejects.toThrow(message);
  });

  it('refuses the same values when telemetry is on, before binding anything', async () => {
    await expect(init({ maxConnections: -5 }, ON)).rejects.toThrow('got number -5');
  });

  it('takes undefined values and an empty object as the defaults', () => {
    expect(checkPrometheusLimits(undefined)).toEqual(PROMETHEUS_LIMITS_DEFAULTS);
    expect(checkPrometheusLimits({})).toEqual(PROMETHEUS_LIMITS_DEFAULTS);
    expect(checkPrometheusLimits({ headersTimeoutMs: undefined, maxConnections: 8 })).toEqual({
      ...PROMETHEUS_LIMITS_DEFAULTS,
      maxConnections: 8,
    });
    expect(PROMETHEUS_LIMITS_DEFAULTS).toEqual({
      headersTimeoutMs: 5_000,
      requestTimeoutMs: 10_000,
      keepAliveTimeoutMs: 5_000,
    });
  });

  it('with telemetry off, a good value changes nothing: null, as without it', async () => {
    await expect(init({ headersTimeoutMs: 100, maxConnections: 1 })).resolves.toBeNull();
  });
});

describe('the prometheus option reaches the endpoint', () => {
  it.each([
    [150, 4321],
    [150, 150],
  ])(
    'bounds the endpoint with the given deadlines (headers %p ms, request %p ms)',
    async (headersTimeoutMs, requestTimeoutMs) => {
      const handle = await init({ headersTimeoutMs, requestTimeoutMs }, ON);
      const began = performance.now();
      const raw = await openRaw(handle?.prometheusEndpoint as string);
      try {
        // A silent client: only the (short) headers deadline can end it, with Node's 408;
        // Node's own default would hold it for 60 s, past jest's timeout.
        const response = await readResponse(raw);
        expect(response.status).toBe(408);
        expect(performance.now() - began).toBeGreaterThanOrEqual(Math.min(headersTimeoutMs, requestTimeoutMs));
      } finally {
        raw.socket.destroy();
      }
    },
  );
});
