// The sandbox lifecycle metrics under a real SDK reader: their shape, the four recorders, and
// every edge rule of the per-sandbox helper (a failed create, a failure after the handle was
// returned, a close that throws, a second release, a borrowed handle, the `sandbox` span
// group off, telemetry switched on mid-life).

import {
  ATTR_SANDBOX_PROVIDER,
  METRIC_SANDBOX_ACTIVE,
  METRIC_SANDBOX_CREATE_RETRY,
  METRIC_SANDBOX_EXEC_DURATION,
  METRIC_SANDBOX_STARTUP_DURATION,
  SANDBOX_DURATION_BOUNDARIES_MS,
} from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import {
  recordSandboxActive,
  recordSandboxCreateRetry,
  recordSandboxExecDuration,
  recordSandboxStartup,
  SandboxLifecycle,
} from '@gym/sandbox-telemetry';
import { createMetricHarness, type DiagCapture, type MetricHarness, pointsOf } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { type Meter, metrics } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType, type Histogram } from '@opentelemetry/sdk-metrics';
import { captureSandboxDiag } from './support.js';

const DOCKER = { [ATTR_SANDBOX_PROVIDER]: 'docker' };

let m: MetricHarness;
let diagnostics: DiagCapture;
let options: { provider: string; meterProvider: MetricHarness['meterProvider'] };

function sandboxGroup(on: boolean): void {
  setTelemetryState({
    metricsExporting: true,
    tracesExporting: true,
    spanGroups: on ? ['server', 'sandbox'] : ['server'],
    orchestrator: false,
  });
}

beforeEach(() => {
  m = createMetricHarness();
  diagnostics = captureSandboxDiag();
  options = { provider: 'docker', meterProvider: m.meterProvider };
  sandboxGroup(true);
});
afterEach(async () => {
  diagnostics.stop();
  setTelemetryState(undefined);
  metrics.disable();
  delete process.env.NEMO_GYM_OTEL_SPAN_GROUPS;
  await m.shutdown();
});

/** The points of `name` in what `harness` exports (none when it was not exported). */
async function points(name: string, harness: MetricHarness = m) {
  return pointsOf<unknown>(await harness.collect(), name);
}

/** The value of `gym.sandbox.active` for docker (undefined when never written). */
async function active(harness: MetricHarness = m): Promise<number | undefined> {
  const series = pointsOf<number>(await harness.collect(), METRIC_SANDBOX_ACTIVE);
  expect(series.every((p) => JSON.stringify(p.attributes) === JSON.stringify(DOCKER))).toBe(true);
  return series[0]?.value;
}
async function histogram(name: string): Promise<Histogram | undefined> {
  return pointsOf<Histogram>(await m.collect(), name)[0]?.value;
}

/** A manual clock: `at(ms)` moves it. */
function clock() {
  let now = 1000;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('the four instruments', () => {
  it('names, kinds, units, buckets, the one attribute and the scope, as an exporter sees them', async () => {
    recordSandboxActive(1, options);
    recordSandboxStartup(1200, options);
    recordSandboxExecDuration(40, options);
    recordSandboxCreateRetry(options);
    const collected = await m.collect();
    const shape = [...collected.values()]
      .map((metric) => ({
        name: metric.descriptor.name,
        type: DataPointType[metric.dataPointType],
        unit: metric.descriptor.unit,
        monotonic: metric.dataPointType === DataPointType.SUM ? metric.isMonotonic : undefined,
        attributes: metric.dataPoints.map((p) => p.attributes),
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
    expect(shape).toEqual([
      { name: METRIC_SANDBOX_ACTIVE, type: 'SUM', unit: '{sandbox}', monotonic: false, attributes: [DOCKER] },
      { name: METRIC_SANDBOX_CREATE_RETRY, type: 'SUM', unit: '1', monotonic: true, attributes: [DOCKER] },
      { name: METRIC_SANDBOX_EXEC_DURATION, type: 'HISTOGRAM', unit: 'ms', monotonic: undefined, attributes: [DOCKER] },
      {
        name: METRIC_SANDBOX_STARTUP_DURATION,
        type: 'HISTOGRAM',
        unit: 'ms',
        monotonic: undefined,
        attributes: [DOCKER],
      },
    ]);
    expect((await histogram(METRIC_SANDBOX_STARTUP_DURATION))!.buckets.boundaries).toEqual([
      ...SANDBOX_DURATION_BOUNDARIES_MS,
    ]);
    expect((await histogram(METRIC_SANDBOX_EXEC_DURATION))!.buckets.boundaries).toEqual([
      ...SANDBOX_DURATION_BOUNDARIES_MS,
    ]);
    for (const metric of collected.values())
      expect(metric.aggregationTemporality).toBe(AggregationTemporality.CUMULATIVE);
  });

  it('each provider is its own series', async () => {
    recordSandboxActive(1, options);
    recordSandboxActive(1, { ...options, provider: 'local-process' });
    recordSandboxActive(1, { ...options, provider: 'local-process' });
    const series = await points(METRIC_SANDBOX_ACTIVE);
    expect(series.map((p) => [p.attributes[ATTR_SANDBOX_PROVIDER], p.value])).toEqual([
      ['docker', 1],
      ['local-process', 2],
    ]);
  });

  it('records on an injected meter, and on the global provider while metrics export', async () => {
    recordSandboxActive(1, { provider: 'docker', meter: m.meterProvider.getMeter('mine') as Meter });
    expect(await active()).toBe(1);
    setTelemetryState(undefined);
    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = 'default,sandbox';
    recordSandboxActive(1, { provider: 'docker' }); // nothing registered: nothing exports
    expect(await active()).toBe(1);
    const global = createMetricHarness();
    metrics.setGlobalMeterProvider(global.meterProvider);
    recordSandboxActive(1, { provider: 'docker', meter: null }); // null is "not injected"
    expect(await active(global)).toBe(1);
    expect(await global.scopes()).toEqual(['@gym/sandbox-telemetry']);
    await global.shutdown();
  });
});

describe('the recorders', () => {
  it.each([
    ['an id-like name', 'Docker-7F3A'],
    ['an empty name', ''],
    ['a number', 7],
    ['a String object', new String('docker')],
    ['nothing', undefined],
  ])('a provider that is %s is a programming error: RangeError, on or off', (_name, provider) => {
    const bad = { provider: provider as string };
    expect(() => recordSandboxActive(1, { ...bad, meterProvider: m.meterProvider })).toThrow(RangeError);
    sandboxGroup(false);
    expect(() => recordSandboxStartup(1, bad)).toThrow('provider must be a string matching');
    expect(() => new SandboxLifecycle(bad)).toThrow(RangeError);
  });

  it('bad numbers are dropped with one warning per recorder and field, never thrown', async () => {
    for (const value of [Number.NaN, 1.5, Number.POSITIVE_INFINITY, '1']) {
      expect(() => recordSandboxActive(value as number, options)).not.toThrow();
    }
    for (const value of [Number.NaN, -1, Number.POSITIVE_INFINITY, '1']) {
      recordSandboxStartup(value as number, options);
      recordSandboxExecDuration(value as number, options);
    }
    expect((await m.collect()).size).toBe(0);
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining('recordSandboxActive: delta = number NaN is not an integer'),
      expect.stringContaining('recordSandboxStartup: ms = number NaN is not a finite number of milliseconds >= 0'),
      expect.stringContaining('recordSandboxExecDuration: ms = number NaN is not a finite number'),
    ]);
  });

  it('a throwing meter, provider or option getter never fails the caller', () => {
    const throwingProvider = {
      getMeter: () => {
        throw new Error('no meter');
      },
    } as never;
    const throwingGetter = Object.defineProperty({ meterProvider: m.meterProvider }, 'provider', {
      enumerable: true,
      get() {
        throw new Error('provider getter exploded');
      },
    }) as never;
    expect(() => {
      recordSandboxActive(1, { provider: 'docker', meterProvider: throwingProvider });
      recordSandboxCreateRetry(throwingGetter);
      const lifecycle = new SandboxLifecycle(throwingGetter);
      lifecycle.create(() => 1);
      lifecycle.release();
    }).not.toThrow();
    expect(diagnostics.lines('warn').join('\n')).toContain('no meter');
    expect(diagnostics.lines('warn').join('\n')).toContain('provider getter exploded');
  });
});

describe('SandboxLifecycle edge rules', () => {
  it('a successful create adds one and records its startup; release subtracts it', async () => {
    const time = clock();
    const lifecycle = new SandboxLifecycle({ ...options, now: time.now });
    const handle = await lifecycle.create(async () => {
      time.advance(1500);
      return { id: 'sbx-1' };
    });
    expect(handle).toEqual({ id: 'sbx-1' });
    expect(lifecycle.state).toBe('held');
    expect(await active()).toBe(1);
    expect(await histogram(METRIC_SANDBOX_STARTUP_DURATION)).toMatchObject({ count: 1, sum: 1500 });
    lifecycle.release();
    expect(await active()).toBe(0);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('no capacity');
      },
    ],
    ['rejects', () => Promise.reject(new Error('no capacity'))],
  ])('a create that %s adds nothing and records no startup; the error comes back unchanged', async (_n, create) => {
    const lifecycle = new SandboxLifecycle(options);
    await expect(async () => lifecycle.create(create)).rejects.toThrow('no capacity');
    expect(lifecycle.state).toBe('new');
    lifecycle.release(); // the caller's cleanup after a failed create
    expect(await points(METRIC_SANDBOX_ACTIVE)).toEqual([]);
    expect(await points(METRIC_SANDBOX_STARTUP_DURATION)).toEqual([]);
  });

  it('a failed create can be tried again on the same lifecycle', async () => {
    const lifecycle = new SandboxLifecycle(options);
    expect(() =>
      lifecycle.create(() => {
        throw new Error('once');
      }),
    ).toThrow('once');
    lifecycle.create(() => 'second');
    expect(await active()).toBe(1);
  });

  it('a failure after the handle was returned adds then subtracts: net 0', async () => {
    const lifecycle = new SandboxLifecycle(options);
    const sandbox = lifecycle.create(() => ({ ready: () => Promise.reject(new Error('health check failed')) }));
    expect(await active()).toBe(1);
    await expect(
      (async () => {
        try {
          await sandbox.ready();
        } catch (error) {
          lifecycle.release();
          throw error;
        }
      })(),
    ).rejects.toThrow('health check failed');
    expect(await active()).toBe(0);
    expect(await histogram(METRIC_SANDBOX_STARTUP_DURATION)).toMatchObject({ count: 1 });
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('close failed');
      },
    ],
    ['rejects', () => Promise.reject(new Error('close failed'))],
  ])(
    'release subtracts once even if closing %s; a second release subtracts nothing but closes again',
    async (_n, close) => {
      const lifecycle = new SandboxLifecycle(options);
      lifecycle.create(() => 'sandbox');
      lifecycle.create(() => 'again'); // a second create on a held sandbox: runs, counts nothing
      expect(await active()).toBe(1);
      let closes = 0;
      const closing = () => {
        closes++;
        return close();
      };
      await expect(async () => lifecycle.release(closing)).rejects.toThrow('close failed');
      expect(await active()).toBe(0);
      await expect(async () => lifecycle.release(closing)).rejects.toThrow('close failed');
      lifecycle.release();
      expect(closes).toBe(2);
      expect(await active()).toBe(0);
    },
  );

  it('a borrowed (attached) sandbox is never added nor subtracted, and records no startup', async () => {
    const lifecycle = new SandboxLifecycle({ ...options, owned: false });
    expect(lifecycle.create(() => 'attached')).toBe('attached');
    lifecycle.exec(() => 1);
    lifecycle.release(() => undefined);
    lifecycle.release();
    expect(await points(METRIC_SANDBOX_ACTIVE)).toEqual([]);
    expect(await points(METRIC_SANDBOX_STARTUP_DURATION)).toEqual([]);
    expect(await points(METRIC_SANDBOX_EXEC_DURATION)).toHaveLength(1); // exec is exec, wherever the sandbox came from
  });

  it('with the sandbox span group off, none of the four is recorded (an injected meter included)', async () => {
    sandboxGroup(false);
    const lifecycle = new SandboxLifecycle(options);
    lifecycle.create(() => {
      lifecycle.retried();
      return 'sandbox';
    });
    lifecycle.exec(() => 1);
    lifecycle.release();
    recordSandboxActive(1, options);
    recordSandboxStartup(1, options);
    recordSandboxExecDuration(1, options);
    recordSandboxCreateRetry(options);
    expect((await m.collect()).size).toBe(0);
  });

  it('the group off by default (no state, no NEMO_GYM_OTEL_SPAN_GROUPS): nothing recorded', async () => {
    setTelemetryState(undefined);
    recordSandboxActive(1, options);
    expect((await m.collect()).size).toBe(0);
    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = 'default,sandbox';
    recordSandboxActive(1, options);
    expect(await active()).toBe(1);
  });

  it('the decision is taken when the create starts: telemetry on mid-life never subtracts what was not added', async () => {
    sandboxGroup(false);
    const lifecycle = new SandboxLifecycle(options);
    lifecycle.create(() => 'sandbox');
    sandboxGroup(true);
    recordSandboxActive(1, options); // another sandbox, added while on
    lifecycle.release();
    expect(await active()).toBe(1);
  });

  it('…and the release goes to the meter the add went to, even after the group is switched off', async () => {
    const lifecycle = new SandboxLifecycle(options);
    lifecycle.create(() => 'sandbox');
    sandboxGroup(false);
    lifecycle.release();
    expect(await active()).toBe(0);
  });

  it('a release while the create is still running: the create, when it finishes, adds nothing', async () => {
    const lifecycle = new SandboxLifecycle(options);
    let finish!: (value: string) => void;
    const creating = lifecycle.create(() => new Promise<string>((resolve) => (finish = resolve)));
    lifecycle.release(); // e.g. a timeout gave up on the create
    finish('late');
    await expect(creating).resolves.toBe('late');
    expect(await points(METRIC_SANDBOX_ACTIVE)).toEqual([]);
    expect(lifecycle.state).toBe('released');
  });

  it('exec records its duration whether it returns or throws, and hands back the same result or error', async () => {
    const time = clock();
    const lifecycle = new SandboxLifecycle({ ...options, now: time.now });
    const error = new Error('exit 1');
    const after = <T>(ms: number, value: T): T => {
      time.advance(ms);
      return value;
    };
    expect(lifecycle.exec(() => after(30, 'out'))).toBe('out');
    await expect(lifecycle.exec(async () => after(70, 'async out'))).resolves.toBe('async out');
    expect(() =>
      lifecycle.exec(() => {
        time.advance(100);
        throw error;
      }),
    ).toThrow(error);
    await expect(lifecycle.exec(() => after(300, Promise.reject(error)))).rejects.toBe(error);
    expect(await histogram(METRIC_SANDBOX_EXEC_DURATION)).toMatchObject({ count: 4, sum: 500 });
  });

  it('retries are counted', async () => {
    const lifecycle = new SandboxLifecycle(options);
    await lifecycle.create(async () => {
      for (let attempt = 1; ; attempt++) {
        if (attempt === 3) return 'sandbox';
        lifecycle.retried();
      }
    });
    expect((await points(METRIC_SANDBOX_CREATE_RETRY))[0]?.value).toBe(2);
  });

  it('a clock that throws or lies drops the durations, never the counts, and never throws', async () => {
    const lifecycle = new SandboxLifecycle({
      ...options,
      now: () => {
        throw new Error('clock down');
      },
    });
    expect(lifecycle.create(() => 'sandbox')).toBe('sandbox');
    expect(lifecycle.exec(() => 'ran')).toBe('ran');
    expect(await active()).toBe(1);
    expect(await points(METRIC_SANDBOX_STARTUP_DURATION)).toEqual([]);
    let now = 10;
    const backwards = new SandboxLifecycle({ ...options, now: () => (now -= 5) });
    backwards.create(() => 'sandbox');
    expect(await active()).toBe(2);
    expect(await points(METRIC_SANDBOX_STARTUP_DURATION)).toEqual([]);
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining('the clock threw'),
      expect.stringContaining('the clock went backwards'),
    ]);
  });

  it('off (nothing injected, nothing exporting): the clock is never read', () => {
    setTelemetryState(undefined);
    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = 'sandbox';
    let reads = 0;
    const lifecycle = new SandboxLifecycle({ provider: 'docker', now: () => ++reads });
    lifecycle.create(() => 'sandbox');
    lifecycle.exec(() => 1);
    lifecycle.release();
    expect(reads).toBe(0);
  });

  it('refuses a non-boolean owned and a non-function now, naming them', () => {
    expect(() => new SandboxLifecycle({ provider: 'docker', owned: 'no' as never })).toThrow(
      'owned must be true or false (false for a borrowed sandbox); got string "no"',
    );
    expect(() => new SandboxLifecycle({ provider: 'docker', now: 5 as never })).toThrow(
      'now must be a function returning milliseconds; got number 5',
    );
  });
});
