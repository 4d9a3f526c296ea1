// The sandbox lifecycle metrics under a real SDK reader: their shape, and every edge rule of
// the per-sandbox helper (a failed create, a failure after the handle was returned, a close
// that fails and its retry, a second release, a borrowed handle, the `sandbox` span group off, telemetry
// switched on mid-life). Time is jest's fake clock (performance.now() included).

import { ATTR_SANDBOX_PROVIDER, INSTRUMENTS } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { SandboxLifecycle, type SandboxLifecycleOptions } from '@gym/sandbox-telemetry';
import { createMetricHarness, type DiagCapture, type MetricHarness, pointsOf } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { metrics } from '@opentelemetry/api';
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
  jest.useFakeTimers();
  m = createMetricHarness();
  diagnostics = captureSandboxDiag();
  options = { provider: 'docker', meterProvider: m.meterProvider };
  sandboxGroup(true);
});
afterEach(async () => {
  jest.useRealTimers();
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
  const series = pointsOf<number>(await harness.collect(), INSTRUMENTS.sandboxActive.name);
  expect(series.every((p) => JSON.stringify(p.attributes) === JSON.stringify(DOCKER))).toBe(true);
  return series[0]?.value;
}
async function histogram(name: string): Promise<Histogram | undefined> {
  return pointsOf<Histogram>(await m.collect(), name)[0]?.value;
}

/** One more sandbox held by `options`'s provider: a lifecycle created and never released. */
function hold(with_: SandboxLifecycleOptions = options): SandboxLifecycle {
  const lifecycle = new SandboxLifecycle(with_);
  lifecycle.create(() => 'sandbox');
  return lifecycle;
}

describe('the five instruments', () => {
  it('names, kinds, units, buckets, the one attribute and the scope, as an exporter sees them', async () => {
    const lifecycle = new SandboxLifecycle(options);
    lifecycle.create(() => {
      lifecycle.retried();
      jest.advanceTimersByTime(1200);
      return 'sandbox';
    });
    lifecycle.exec(() => jest.advanceTimersByTime(40));
    lifecycle.transfer(() => jest.advanceTimersByTime(900));
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
    const histogramShape = { type: 'HISTOGRAM', unit: 'ms', monotonic: undefined, attributes: [DOCKER] };
    expect(shape).toEqual([
      { name: INSTRUMENTS.sandboxActive.name, type: 'SUM', unit: '{sandbox}', monotonic: false, attributes: [DOCKER] },
      { name: INSTRUMENTS.sandboxCreateRetry.name, type: 'SUM', unit: '1', monotonic: true, attributes: [DOCKER] },
      { name: INSTRUMENTS.sandboxExecDuration.name, ...histogramShape },
      { name: INSTRUMENTS.sandboxStartupDuration.name, ...histogramShape },
      { name: INSTRUMENTS.sandboxTransferDuration.name, ...histogramShape },
    ]);
    for (const [name, sum] of [
      [INSTRUMENTS.sandboxStartupDuration.name, 1200],
      [INSTRUMENTS.sandboxExecDuration.name, 40],
      [INSTRUMENTS.sandboxTransferDuration.name, 900],
    ] as const) {
      const recorded = await histogram(name);
      expect(recorded?.buckets.boundaries).toEqual([...INSTRUMENTS.sandboxStartupDuration.boundaries]);
      expect(recorded?.sum).toBe(sum);
    }
    for (const metric of collected.values())
      expect(metric.aggregationTemporality).toBe(AggregationTemporality.CUMULATIVE);
  });

  it('each provider is its own series', async () => {
    hold();
    hold({ ...options, provider: 'local-process' });
    hold({ ...options, provider: 'local-process' });
    const series = await points(INSTRUMENTS.sandboxActive.name);
    expect(series.map((p) => [p.attributes[ATTR_SANDBOX_PROVIDER], p.value])).toEqual([
      ['docker', 1],
      ['local-process', 2],
    ]);
  });

  it('records on an injected meter provider, and on the global provider while metrics export', async () => {
    hold();
    expect(await active()).toBe(1);
    setTelemetryState(undefined);
    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = 'default,sandbox';
    hold({ provider: 'docker' }); // nothing registered: nothing exports
    expect(await active()).toBe(1);
    const global = createMetricHarness();
    metrics.setGlobalMeterProvider(global.meterProvider);
    hold({ provider: 'docker' });
    expect(await active(global)).toBe(1);
    expect(await global.scopes()).toEqual(['@gym/sandbox-telemetry']);
    await global.shutdown();
  });
});

describe('the provider name', () => {
  it.each([
    ['an id-like name', 'Docker-7F3A'],
    ['an empty name', ''],
    ['a number', 7],
    ['nothing', undefined],
  ])('that is %s is a programming error: RangeError, on or off', (_name, provider) => {
    const bad = { provider: provider as string };
    expect(() => new SandboxLifecycle({ ...bad, meterProvider: m.meterProvider })).toThrow(RangeError);
    sandboxGroup(false);
    expect(() => new SandboxLifecycle(bad)).toThrow('provider must be a string matching');
  });
});

it('a throwing meter provider never fails the caller, and is reported once', () => {
  const throwingProvider = {
    getMeter: () => {
      throw new Error('no meter');
    },
  } as never;
  const lifecycle = new SandboxLifecycle({ provider: 'docker', meterProvider: throwingProvider });
  expect(lifecycle.create(() => 'sandbox')).toBe('sandbox');
  expect(lifecycle.exec(() => 'ran')).toBe('ran');
  lifecycle.retried();
  expect(lifecycle.release(() => 'closed')).toBe('closed');
  expect(diagnostics.lines('warn')).toEqual([expect.stringContaining('no meter')]);
});

it('a meter whose instruments throw never fails the caller, and is reported once', async () => {
  const broken = {
    getMeter: () => ({
      createUpDownCounter: () => ({
        add: () => {
          throw new Error('add failed');
        },
      }),
      createHistogram: () => ({
        record: () => {
          throw new Error('record failed');
        },
      }),
      createCounter: () => ({
        add: () => {
          throw new Error('add failed');
        },
      }),
    }),
  } as never;
  const lifecycle = new SandboxLifecycle({ provider: 'docker', meterProvider: broken });
  expect(lifecycle.create(() => 'sandbox')).toBe('sandbox');
  await expect(lifecycle.exec(async () => 'ran')).resolves.toBe('ran');
  expect(() => lifecycle.transfer(() => 'moved')).not.toThrow();
  lifecycle.retried();
  expect(lifecycle.release()).toBeUndefined();
  expect(diagnostics.lines('warn')).toEqual([expect.stringContaining('add failed')]);
});

describe('SandboxLifecycle edge rules', () => {
  it('a successful create adds one and records its startup; release subtracts it', async () => {
    const lifecycle = new SandboxLifecycle(options);
    const handle = await lifecycle.create(async () => {
      jest.advanceTimersByTime(1500);
      return { id: 'sbx-1' };
    });
    expect(handle).toEqual({ id: 'sbx-1' });
    expect(lifecycle.state).toBe('held');
    expect(await active()).toBe(1);
    expect(await histogram(INSTRUMENTS.sandboxStartupDuration.name)).toMatchObject({ count: 1, sum: 1500 });
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
    expect(await points(INSTRUMENTS.sandboxActive.name)).toEqual([]);
    expect(await points(INSTRUMENTS.sandboxStartupDuration.name)).toEqual([]);
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
    expect(await histogram(INSTRUMENTS.sandboxStartupDuration.name)).toMatchObject({ count: 1 });
  });

  // Gym's test_failed_close_keeps_the_sandbox_counted_until_a_retry_releases_it.
  it.each([
    [
      'throws',
      () => {
        throw new Error('close failed');
      },
    ],
    ['rejects', () => Promise.reject(new Error('close failed'))],
  ])('a close that %s keeps the sandbox counted until a retry releases it, once', async (_n, fail) => {
    const lifecycle = new SandboxLifecycle(options);
    lifecycle.create(() => 'sandbox');
    lifecycle.create(() => 'again'); // a second create on a held sandbox: runs, counts nothing
    expect(await active()).toBe(1);
    let closes = 0;
    await expect(async () =>
      lifecycle.release(() => {
        closes++;
        return fail();
      }),
    ).rejects.toThrow('close failed');
    expect(await active()).toBe(1); // still there: the close failed
    expect(lifecycle.state).toBe('held');
    await expect(
      lifecycle.release(async () => {
        closes++;
        return 'closed';
      }),
    ).resolves.toBe('closed');
    expect(await active()).toBe(0);
    expect(lifecycle.state).toBe('released');
    expect(lifecycle.release(() => ++closes)).toBe(3); // a later close still runs, subtracts nothing
    lifecycle.release();
    expect(await active()).toBe(0);
  });

  it('a close still running keeps the sandbox counted; two closes at once subtract once', async () => {
    const lifecycle = new SandboxLifecycle(options);
    lifecycle.create(() => 'sandbox');
    const first = lifecycle.release(() => new Promise((resolve) => setTimeout(resolve, 500, 'first')));
    const second = lifecycle.release(() => new Promise((resolve) => setTimeout(resolve, 800, 'second')));
    await jest.advanceTimersByTimeAsync(499);
    expect(await active()).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    await expect(first).resolves.toBe('first');
    expect(await active()).toBe(0);
    await jest.advanceTimersByTimeAsync(300);
    await expect(second).resolves.toBe('second');
    expect(await active()).toBe(0);
  });

  it('a borrowed (attached) sandbox is never added nor subtracted, and records no startup', async () => {
    const lifecycle = new SandboxLifecycle({ ...options, owned: false });
    expect(lifecycle.create(() => 'attached')).toBe('attached');
    lifecycle.exec(() => 1);
    lifecycle.release(() => undefined);
    lifecycle.release();
    expect(await points(INSTRUMENTS.sandboxActive.name)).toEqual([]);
    expect(await points(INSTRUMENTS.sandboxStartupDuration.name)).toEqual([]);
    expect(await points(INSTRUMENTS.sandboxExecDuration.name)).toHaveLength(1); // exec is exec, wherever the sandbox came from
  });

  it('with the sandbox span group off, none of the five is recorded (an injected meter included)', async () => {
    sandboxGroup(false);
    const lifecycle = new SandboxLifecycle(options);
    lifecycle.create(() => {
      lifecycle.retried();
      return 'sandbox';
    });
    lifecycle.exec(() => 1);
    lifecycle.transfer(() => 1);
    lifecycle.release();
    hold();
    expect((await m.collect()).size).toBe(0);
  });

  it('the group off by default (no state, no NEMO_GYM_OTEL_SPAN_GROUPS): nothing recorded', async () => {
    setTelemetryState(undefined);
    hold();
    expect((await m.collect()).size).toBe(0);
    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = 'default,sandbox';
    hold();
    expect(await active()).toBe(1);
  });

  it('the decision is taken when the create starts: telemetry on mid-life never subtracts what was not added', async () => {
    sandboxGroup(false);
    const lifecycle = new SandboxLifecycle(options);
    lifecycle.create(() => 'sandbox');
    sandboxGroup(true);
    hold(); // another sandbox, added while on
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

  it('a close that fails while the create is still running: the create, when it finishes, adds one', async () => {
    const lifecycle = new SandboxLifecycle(options);
    let finish!: (value: string) => void;
    const creating = lifecycle.create(() => new Promise<string>((resolve) => (finish = resolve)));
    await expect(async () => lifecycle.release(() => Promise.reject(new Error('not found')))).rejects.toThrow();
    finish('late');
    await expect(creating).resolves.toBe('late');
    expect(await active()).toBe(1); // it exists and nothing closed it
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
    expect(await points(INSTRUMENTS.sandboxActive.name)).toEqual([]);
    expect(lifecycle.state).toBe('released');
  });

  it.each([
    ['exec', INSTRUMENTS.sandboxExecDuration.name],
    ['transfer', INSTRUMENTS.sandboxTransferDuration.name],
  ] as const)(
    '%s records its duration whether it returns or throws, and hands back the same result or error',
    async (method, name) => {
      const lifecycle = new SandboxLifecycle(options);
      const run = <T>(fn: () => T): T => lifecycle[method](fn);
      const error = new Error('exit 1');
      const after = <T>(ms: number, value: T): T => {
        jest.advanceTimersByTime(ms);
        return value;
      };
      expect(run(() => after(30, 'out'))).toBe('out');
      await expect(run(async () => after(70, 'async out'))).resolves.toBe('async out');
      expect(() =>
        run(() => {
          jest.advanceTimersByTime(100);
          throw error;
        }),
      ).toThrow(error);
      await expect(run(() => after(300, Promise.reject(error)))).rejects.toBe(error);
      const slow = run(() => new Promise((resolve) => setTimeout(resolve, 1000, 'late')));
      await jest.advanceTimersByTimeAsync(1000);
      await expect(slow).resolves.toBe('late');
      expect(await histogram(name)).toMatchObject({ count: 5, sum: 1500 });
    },
  );

  it('retries are counted', async () => {
    const lifecycle = new SandboxLifecycle(options);
    await lifecycle.create(async () => {
      for (let attempt = 1; ; attempt++) {
        if (attempt === 3) return 'sandbox';
        lifecycle.retried();
      }
    });
    expect((await points(INSTRUMENTS.sandboxCreateRetry.name))[0]?.value).toBe(2);
  });

  it('off (nothing injected, nothing exporting): the clock is never read', () => {
    setTelemetryState(undefined);
    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = 'sandbox';
    const clock = jest.spyOn(performance, 'now');
    const lifecycle = new SandboxLifecycle({ provider: 'docker' });
    const sandbox = {};
    expect(lifecycle.create(() => sandbox)).toBe(sandbox);
    const running = Promise.resolve('ran');
    expect(lifecycle.exec(() => running)).toBe(running); // not even wrapped
    lifecycle.transfer(() => 1);
    lifecycle.release();
    expect(clock).not.toHaveBeenCalled();
    clock.mockRestore();
  });
});
