// startObserver's lifecycle: one sampler per meter and one handle per call, idempotent stop that clears every timer and
// observer, nothing at all when nothing exports, and telemetry trouble that never throws.

import { ATTR_CPU_MODE, ATTR_SERVER_NAME, INSTRUMENTS } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { startObserver } from '@gym/observer';
import { captureDiag, counterValue, createMetricHarness, histogramCount } from '@gym/test-kit';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { Meter } from '@opentelemetry/api';

afterEach(() => {
  jest.useRealTimers();
  setTelemetryState(undefined);
});

const refTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('one sampler per meter, one handle per caller', () => {
  it('each start returns its own handle; the shared sampler runs until the last handle stops', async () => {
    jest.useFakeTimers({ doNotFake: ['performance', 'queueMicrotask', 'nextTick', 'setImmediate'] });
    const harness = createMetricHarness();
    const bootstrap = startObserver({ meterProvider: harness.meterProvider });
    const user = startObserver({ meterProvider: harness.meterProvider, lagIntervalMs: 5 });
    expect(user).not.toBe(bootstrap);
    // Another provider that hands back the same meter is the same source: one sampler, one lag timer.
    const third = startObserver({ meterProvider: { getMeter: () => harness.meterProvider.getMeter('@gym/observer') } });
    expect(jest.getTimerCount()).toBe(1);
    // The bootstrap stops its own handle at shutdown, twice: the user's series keep going.
    bootstrap.stop();
    bootstrap.stop();
    third.stop();
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(300);
    expect(jest.getTimerCount()).toBe(1);
    user.stop();
    expect(jest.getTimerCount()).toBe(0);
    jest.useRealTimers();
    // Three 100 ms intervals: the sampler kept the first caller's interval, not the user's 5 ms.
    expect(histogramCount(await harness.collect(), INSTRUMENTS.eventLoopLag.name)).toBe(3);
    await harness.shutdown();
  });

  it('after the last stop the observable instruments stop reporting', async () => {
    const harness = createMetricHarness();
    const a = startObserver({ meterProvider: harness.meterProvider });
    const b = startObserver({ meterProvider: harness.meterProvider });
    const user = async () =>
      counterValue(await harness.collect(), INSTRUMENTS.processCpuTime.name, { [ATTR_CPU_MODE]: 'user' }) ?? -1;
    // Burns until the process has used 20 ms more user CPU (a busy loop on a loaded machine may use none).
    const burn = () => {
      const until = process.cpuUsage().user + 20_000;
      while (process.cpuUsage().user < until) {}
    };
    const first = await user();
    a.stop();
    burn();
    const second = await user();
    expect(second).toBeGreaterThan(first);
    b.stop();
    const frozen = await user();
    burn();
    expect(await user()).toBe(frozen);
    await harness.shutdown();
  });

  it('different providers get different observers', async () => {
    const a = createMetricHarness();
    const b = createMetricHarness();
    const oa = startObserver({ meterProvider: a.meterProvider });
    const ob = startObserver({ meterProvider: b.meterProvider });
    expect(ob).not.toBe(oa);
    oa.stop();
    ob.stop();
    await Promise.all([a.shutdown(), b.shutdown()]);
  });
});

describe('timers', () => {
  it('nothing exporting and nothing injected: starting does nothing, no timer', () => {
    jest.useFakeTimers();
    setTelemetryState({ metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator: false });
    const observer = startObserver();
    expect(jest.getTimerCount()).toBe(0);
    observer.stop();
    observer.stop();
  });

  it('stop clears the lag timer (fake timers count it)', async () => {
    jest.useFakeTimers({ doNotFake: ['performance', 'queueMicrotask', 'nextTick', 'setImmediate'] });
    const harness = createMetricHarness();
    const observer = startObserver({ meterProvider: harness.meterProvider });
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(1000);
    expect(jest.getTimerCount()).toBe(1);
    observer.stop();
    expect(jest.getTimerCount()).toBe(0);
    observer.stop();
    expect(jest.getTimerCount()).toBe(0);
    jest.useRealTimers();
    await harness.shutdown();
  });

  it('the lag timer is unref’d: it never appears among the timers that keep the process alive', async () => {
    const harness = createMetricHarness();
    const before = refTimers();
    const observer = startObserver({ meterProvider: harness.meterProvider, lagIntervalMs: 1000 });
    expect(refTimers()).toBe(before);
    observer.stop();
    await harness.shutdown();
  });
});

describe('serverName', () => {
  it('publishes the in-flight series at 0 under the server name from the start', async () => {
    const harness = createMetricHarness();
    const observer = startObserver({ meterProvider: harness.meterProvider, serverName: 'resources' });
    try {
      expect(
        counterValue(await harness.collect(), INSTRUMENTS.requestsInFlight.name, { [ATTR_SERVER_NAME]: 'resources' }),
      ).toBe(0);
    } finally {
      observer.stop();
      await harness.shutdown();
    }
  });

  it('a second start with a server name publishes that series on the sampler already running', async () => {
    const harness = createMetricHarness();
    const first = startObserver({ meterProvider: harness.meterProvider });
    try {
      const second = startObserver({ meterProvider: harness.meterProvider, serverName: 'resources' });
      second.stop();
      expect(
        counterValue(await harness.collect(), INSTRUMENTS.requestsInFlight.name, { [ATTR_SERVER_NAME]: 'resources' }),
      ).toBe(0);
    } finally {
      first.stop();
      await harness.shutdown();
    }
  });
});

describe('never throws into the caller', () => {
  it('a meter that throws on every call: start and stop return, trouble reported once per part', () => {
    const warnings = captureDiag();
    const boom = () => {
      throw new Error('meter broke');
    };
    const meter = new Proxy({}, { get: () => boom }) as unknown as Meter;
    try {
      const observer = startObserver({ meterProvider: { getMeter: () => meter }, serverName: 'resources' });
      expect(() => observer.stop()).not.toThrow();
      const again = startObserver({ meterProvider: { getMeter: () => meter } });
      again.stop();
      const parts = ['lag', 'process', 'gc', 'in-flight'];
      for (const part of parts) {
        expect(warnings.lines('warn').filter((l) => l.includes(`observer's ${part} metrics failed`))).toHaveLength(1);
      }
      expect(warnings.lines('warn').every((l) => l.startsWith('@gym/observer:'))).toBe(true);
    } finally {
      warnings.stop();
    }
  });

  it('stop from inside a record (the lag histogram calls it) leaves nothing running', async () => {
    jest.useFakeTimers({ doNotFake: ['performance', 'queueMicrotask', 'nextTick', 'setImmediate'] });
    const harness = createMetricHarness();
    const real = harness.meterProvider.getMeter('@gym/observer');
    let observer: ReturnType<typeof startObserver> | undefined;
    let records = 0;
    const meter = new Proxy(real, {
      get(target, key, receiver) {
        if (key === 'createHistogram') {
          return (name: string, options: object) => {
            const histogram = target.createHistogram(name, options);
            if (name !== INSTRUMENTS.eventLoopLag.name) return histogram;
            return {
              record(value: number) {
                records += 1;
                histogram.record(value);
                observer?.stop();
              },
            };
          };
        }
        return Reflect.get(target, key, receiver);
      },
    });
    observer = startObserver({ meterProvider: { getMeter: () => meter }, lagIntervalMs: 10 });
    jest.advanceTimersByTime(10);
    expect(records).toBe(1);
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(100);
    expect(records).toBe(1);
    jest.useRealTimers();
    await harness.shutdown();
  });

  it('stop from inside a collection callback, then collect again: no error, nothing left', async () => {
    const harness = createMetricHarness();
    const observer = startObserver({ meterProvider: harness.meterProvider });
    const meter = harness.meterProvider.getMeter('stopper');
    const gauge = meter.createObservableGauge('stopper');
    gauge.addCallback((result) => {
      observer.stop();
      result.observe(1);
    });
    await expect(harness.collect()).resolves.toBeInstanceOf(Map);
    await expect(harness.collect()).resolves.toBeInstanceOf(Map);
    expect(startObserver({ meterProvider: harness.meterProvider })).not.toBe(observer);
    startObserver({ meterProvider: harness.meterProvider }).stop();
    await harness.shutdown();
  });
});

describe('programming errors throw at once', () => {
  it.each([
    [0, /lagIntervalMs must be a finite number of milliseconds from 1 to 2147483647; got number 0/],
    [Number.NaN, /got number NaN/],
    [2 ** 31, /got number 2147483648/],
    ['100', /got string "100"/],
  ])('lagIntervalMs %p', (value, message) => {
    expect(() => startObserver({ lagIntervalMs: value as number })).toThrow(message);
  });

  it('serverName and options', () => {
    expect(() => startObserver({ serverName: '' })).toThrow(/serverName must be a string matching.*got string ""/);
    expect(() => startObserver({ serverName: '../x' })).toThrow(RangeError);
    // A huge value is named, not echoed: the message stays short.
    let message = '';
    try {
      startObserver({ serverName: 'x'.repeat(1_000_000) });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/\(1000000 chars\)$/);
    expect(message.length).toBeLessThan(400);
  });
});
