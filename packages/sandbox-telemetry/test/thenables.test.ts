// Anything with a callable `then` is asynchronous: execa's subprocess (a ChildProcess that is
// also a promise), a Promise of another realm (node:vm), a hand-made thenable. Timed to its
// settlement, and what the caller gets back is what the caller's function returned.

import { AsyncLocalStorage } from 'node:async_hooks';
import { runInNewContext } from 'node:vm';
import {
  ATTR_SANDBOX_PROVIDER,
  METRIC_SANDBOX_ACTIVE,
  METRIC_SANDBOX_EXEC_DURATION,
  METRIC_SANDBOX_STARTUP_DURATION,
} from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { SandboxLifecycle } from '@gym/sandbox-telemetry';
import { createMetricHarness, type MetricHarness, pointsOf } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { Histogram } from '@opentelemetry/sdk-metrics';

let m: MetricHarness;

beforeEach(() => {
  jest.useFakeTimers();
  m = createMetricHarness();
  setTelemetryState({ metricsExporting: true, tracesExporting: true, spanGroups: ['sandbox'], orchestrator: false });
});
afterEach(async () => {
  jest.useRealTimers();
  setTelemetryState(undefined);
  await m.shutdown();
});

const lifecycle = () => new SandboxLifecycle({ provider: 'docker', meterProvider: m.meterProvider });

async function histogram(name: string): Promise<Histogram | undefined> {
  return pointsOf<Histogram>(await m.collect(), name)[0]?.value;
}
async function active(): Promise<number | undefined> {
  return pointsOf<number>(await m.collect(), METRIC_SANDBOX_ACTIVE)[0]?.value;
}

/** A subprocess the way execa returns one: an object with its own API that is also a thenable. */
function subprocess(ms: number, outcome: 'exit 0' | 'exit 1') {
  const done = new Promise<{ exitCode: number }>((resolve, reject) => {
    setTimeout(() => (outcome === 'exit 0' ? resolve({ exitCode: 0 }) : reject(new Error('exit 1'))), ms);
  });
  return {
    pid: 4242,
    kill: () => true,
    // biome-ignore lint/suspicious/noThenProperty: that is what execa's subprocess is
    then: done.then.bind(done),
    catch: done.catch.bind(done),
  };
}

/** A Promise of another realm: `instanceof Promise` is false here. */
function otherRealmPromise<T>(ms: number, value: T, fail = false): Promise<T> {
  const promise = runInNewContext(
    'new Promise((resolve, reject) => setTimeout(() => (fail ? reject(value) : resolve(value)), ms))',
    { setTimeout, ms, value, fail },
  ) as Promise<T>;
  expect(promise instanceof Promise).toBe(false);
  return promise;
}

describe('exec', () => {
  it('an execa-like subprocess is timed to its end (319 ms), and the caller gets the subprocess itself', async () => {
    const child = subprocess(319, 'exit 0');
    const returned = lifecycle().exec(() => child);
    expect(returned).toBe(child);
    expect(returned.pid).toBe(4242);
    await jest.advanceTimersByTimeAsync(13);
    expect(await histogram(METRIC_SANDBOX_EXEC_DURATION)).toBeUndefined(); // not over yet
    await jest.advanceTimersByTimeAsync(306);
    await expect(returned).resolves.toEqual({ exitCode: 0 });
    const recorded = await histogram(METRIC_SANDBOX_EXEC_DURATION);
    expect(recorded?.count).toBe(1);
    expect(recorded?.sum).toBe(319);
  });

  it('a subprocess that fails is timed to its failure too, and the failure stays the caller’s', async () => {
    const child = subprocess(50, 'exit 1');
    const returned = lifecycle().exec(() => child);
    const settled = Promise.resolve(returned).then(
      () => 'fulfilled',
      (error: Error) => error.message,
    );
    await jest.advanceTimersByTimeAsync(50);
    expect(await settled).toBe('exit 1');
    expect((await histogram(METRIC_SANDBOX_EXEC_DURATION))?.sum).toBe(50);
  });

  it('a Promise of another realm is timed to its settlement and settles the same way', async () => {
    const returned = lifecycle().exec(() => otherRealmPromise(120, 'digest'));
    await jest.advanceTimersByTimeAsync(120);
    await expect(returned).resolves.toBe('digest');
    expect((await histogram(METRIC_SANDBOX_EXEC_DURATION))?.sum).toBe(120);
  });
});

describe('create', () => {
  it('a thenable create that rejects adds nothing and records no startup', async () => {
    const life = lifecycle();
    const returned = life.create(() => subprocess(30, 'exit 1'));
    const settled = Promise.resolve(returned).catch((error: Error) => error.message);
    await jest.advanceTimersByTimeAsync(30);
    expect(await settled).toBe('exit 1');
    expect(await active()).toBeUndefined();
    expect(await histogram(METRIC_SANDBOX_STARTUP_DURATION)).toBeUndefined();
    expect(life.state).toBe('new'); // it may be tried again
  });

  it('a create in another realm that rejects adds nothing; one that fulfils adds one, timed to it', async () => {
    const failed = lifecycle();
    const rejected = failed.create(() => otherRealmPromise(10, new Error('no capacity'), true));
    const caught = Promise.resolve(rejected).catch((error: Error) => error.message);
    await jest.advanceTimersByTimeAsync(10);
    expect(await caught).toBe('no capacity');
    expect(await active()).toBeUndefined();

    const created = lifecycle();
    const fulfilled = created.create(() => otherRealmPromise(2500, 'handle'));
    await jest.advanceTimersByTimeAsync(2500);
    await expect(fulfilled).resolves.toBe('handle');
    expect(await active()).toBe(1);
    const startup = pointsOf<Histogram>(await m.collect(), METRIC_SANDBOX_STARTUP_DURATION);
    expect(startup.map((p) => [p.attributes, p.value.sum])).toEqual([[{ [ATTR_SANDBOX_PROVIDER]: 'docker' }, 2500]]);
  });
});

describe('the caller’s async context', () => {
  it('is the same after awaiting a timed exec, a timed subprocess and a create, in two concurrent requests', async () => {
    const request = new AsyncLocalStorage<string>();
    const life = lifecycle();
    const handle = async (id: string) =>
      request.run(id, async () => {
        await life.exec(() => new Promise((resolve) => setTimeout(resolve, 10)));
        const afterExec = request.getStore();
        await life.transfer(() => subprocess(5, 'exit 0'));
        const afterTransfer = request.getStore();
        await lifecycle().create(async () => 'sandbox');
        return [afterExec, afterTransfer, request.getStore()];
      });
    const both = Promise.all([handle('a'), handle('b')]);
    await jest.advanceTimersByTimeAsync(20);
    expect(await both).toEqual([
      ['a', 'a', 'a'],
      ['b', 'b', 'b'],
    ]);
    expect((await histogram(METRIC_SANDBOX_EXEC_DURATION))?.count).toBe(2);
  });
});
