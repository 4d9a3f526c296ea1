// Anything with a callable `then` is asynchronous: execa's subprocess (a ChildProcess that is
// also a promise), a Promise of another realm (node:vm), a hand-made thenable. Timed to its
// settlement, and what the caller gets back keeps the API of what the caller's function
// returned. The ground truth of "the work runs exactly as often as with telemetry off" is a
// lazy thenable (superagent, a mongoose Query, a knex builder) that counts its `then` calls.

import { AsyncLocalStorage } from 'node:async_hooks';
import { ChildProcess, spawn } from 'node:child_process';
import { runInNewContext } from 'node:vm';
import { ATTR_SANDBOX_PROVIDER, INSTRUMENTS } from '@gym/constants';
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
  return pointsOf<number>(await m.collect(), INSTRUMENTS.sandboxActive.name)[0]?.value;
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

/**
 * A lazy thenable, as superagent requests, mongoose queries and knex builders are: nothing
 * runs until `then` is called, and each `then` runs the work again. It counts its runs.
 */
class LazyQuery {
  runs = 0;
  readonly #ms: number;
  readonly #outcome: 'rows' | 'error';
  filter = '';
  constructor(ms: number, outcome: 'rows' | 'error' = 'rows') {
    this.#ms = ms;
    this.#outcome = outcome;
  }
  where(filter: string): this {
    this.filter = filter;
    return this;
  }
  // biome-ignore lint/suspicious/noThenProperty: a lazy thenable is what is under test
  then<R1 = string, R2 = never>(
    onFulfilled?: ((rows: string) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((error: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    this.runs++;
    const ms = this.#ms;
    const outcome = this.#outcome;
    return new Promise<string>((resolve, reject) =>
      setTimeout(
        () => (outcome === 'rows' ? resolve(`rows of ${this.filter}`) : reject(new Error('query failed'))),
        ms,
      ),
    ).then(onFulfilled, onRejected);
  }
}

describe('a lazy thenable runs exactly as often as with telemetry off', () => {
  const off = () => {
    setTelemetryState(undefined); // and no meter provider: nothing records
    return new SandboxLifecycle({ provider: 'docker' });
  };
  const onOrOff = [
    ['on', () => lifecycle()],
    ['off', off],
  ] as const;
  const methods = [
    ['exec', (life: SandboxLifecycle, q: LazyQuery) => life.exec(() => q)],
    ['transfer', (life: SandboxLifecycle, q: LazyQuery) => life.transfer(() => q)],
    ['create', (life: SandboxLifecycle, q: LazyQuery) => life.create(() => q)],
    ['release', (life: SandboxLifecycle, q: LazyQuery) => life.release(() => q)],
  ] as const;

  it.each(methods.flatMap(([method, call]) => onOrOff.map(([state, make]) => [method, state, call, make] as const)))(
    '%s, telemetry %s: one await, one run; two awaits, two runs; no await, no run',
    async (_method, _state, call, make) => {
      for (const awaits of [1, 2, 0]) {
        const query = new LazyQuery(40);
        const returned = call(make(), query);
        const results: Promise<unknown>[] = [];
        for (let i = 0; i < awaits; i++) results.push((async () => await returned)());
        await jest.advanceTimersByTimeAsync(40);
        expect(await Promise.all(results)).toEqual(Array(awaits).fill('rows of '));
        expect(query.runs).toBe(awaits);
      }
    },
  );

  it('exec and transfer record the one run’s duration; the returned query keeps its own API', async () => {
    const life = lifecycle();
    const query = new LazyQuery(75);
    const returned = life.exec(() => query);
    expect(returned).toBeInstanceOf(LazyQuery);
    expect(await histogram(INSTRUMENTS.sandboxExecDuration.name)).toBeUndefined(); // nothing ran yet
    returned.where('id > 3'); // a builder method, on the query itself
    expect(query.filter).toBe('id > 3');
    const rows = returned.then((r) => r.toUpperCase());
    await jest.advanceTimersByTimeAsync(75);
    expect(await rows).toBe('ROWS OF ID > 3');
    expect(query.runs).toBe(1);
    expect(await histogram(INSTRUMENTS.sandboxExecDuration.name)).toMatchObject({ count: 1, sum: 75 });

    const failing = new LazyQuery(25, 'error');
    const transferred = life.transfer(() => failing);
    const caught = (async () => {
      try {
        await transferred;
      } catch (error) {
        return (error as Error).message;
      }
    })();
    await jest.advanceTimersByTimeAsync(25);
    expect(await caught).toBe('query failed');
    expect(failing.runs).toBe(1);
    expect(await histogram(INSTRUMENTS.sandboxTransferDuration.name)).toMatchObject({ count: 1, sum: 25 });
  });

  it('a lazy create adds one when it fulfils, run once; a lazy close releases it, run once', async () => {
    const life = lifecycle();
    const create = new LazyQuery(1200);
    const creating = (async () => await life.create(() => create))(); // the await starts the work
    await jest.advanceTimersByTimeAsync(1200);
    expect(await creating).toBe('rows of ');
    expect(create.runs).toBe(1);
    expect(await active()).toBe(1);
    expect(await histogram(INSTRUMENTS.sandboxStartupDuration.name)).toMatchObject({ count: 1, sum: 1200 });
    const close = new LazyQuery(10);
    const closing = (async () => await life.release(() => close))();
    expect(await active()).toBe(1); // not closed yet
    await jest.advanceTimersByTimeAsync(10);
    await closing;
    expect(close.runs).toBe(1);
    expect(await active()).toBe(0);
    expect(life.state).toBe('released');
  });

  it('a frozen thenable (a Proxy may not replace its `then`) still runs once per await, timed', async () => {
    let runs = 0;
    const frozen = Object.freeze({
      // biome-ignore lint/suspicious/noThenProperty: a lazy thenable is what is under test
      then(onFulfilled: (value: string) => unknown) {
        runs++;
        setTimeout(() => onFulfilled('done'), 60);
      },
    });
    const returned = lifecycle().exec(() => frozen);
    const awaited = (async () => await returned)();
    await jest.advanceTimersByTimeAsync(60);
    expect(await awaited).toBe('done');
    expect(runs).toBe(1);
    expect(await histogram(INSTRUMENTS.sandboxExecDuration.name)).toMatchObject({ count: 1, sum: 60 });
  });
});

describe('exec', () => {
  it('an execa-like subprocess is timed to its end (319 ms), and the caller gets the subprocess’s API', async () => {
    const child = subprocess(319, 'exit 0');
    const returned = lifecycle().exec(() => child);
    expect(returned.pid).toBe(4242);
    expect(returned.kill()).toBe(true);
    expect(returned.catch).toBe(child.catch);
    await jest.advanceTimersByTimeAsync(13);
    expect(await histogram(INSTRUMENTS.sandboxExecDuration.name)).toBeUndefined(); // not over yet
    await jest.advanceTimersByTimeAsync(306);
    await expect(returned).resolves.toEqual({ exitCode: 0 });
    const recorded = await histogram(INSTRUMENTS.sandboxExecDuration.name);
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
    expect((await histogram(INSTRUMENTS.sandboxExecDuration.name))?.sum).toBe(50);
  });

  it('a Promise of another realm is timed to its settlement and settles the same way', async () => {
    const returned = lifecycle().exec(() => otherRealmPromise(120, 'digest'));
    await jest.advanceTimersByTimeAsync(120);
    await expect(returned).resolves.toBe('digest');
    expect((await histogram(INSTRUMENTS.sandboxExecDuration.name))?.sum).toBe(120);
  });
});

describe('a real child process made thenable the way execa makes it', () => {
  /** execa's own recipe: the ChildProcess, with `then`, `catch` and `finally` of a promise of its end. */
  function execaLike(script: string) {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
    const ended = new Promise<{ exitCode: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (exitCode, signal) => resolve({ exitCode, signal })),
    );
    for (const property of ['then', 'catch', 'finally'] as const) {
      const descriptor = Reflect.getOwnPropertyDescriptor(Promise.prototype, property)!;
      Reflect.defineProperty(child, property, { ...descriptor, value: descriptor.value!.bind(ended) });
    }
    return child as ChildProcess & Promise<{ exitCode: number | null; signal: string | null }>;
  }

  it('keeps its stdout, pid, kill() and events, and is timed to its exit', async () => {
    jest.useRealTimers();
    const child = execaLike('process.stdout.write("ready\\n"); setInterval(() => {}, 1000)');
    const returned = lifecycle().exec(() => child);
    expect(returned).toBeInstanceOf(ChildProcess);
    expect(returned.pid).toBe(child.pid);
    const firstLine = await new Promise<string>((resolve) => returned.stdout!.once('data', (d) => resolve(`${d}`)));
    expect(firstLine).toBe('ready\n');
    let exitEvents = 0;
    returned.on('exit', () => exitEvents++);
    expect(returned.kill()).toBe(true);
    expect(child.killed).toBe(true);
    expect(await returned).toEqual({ exitCode: null, signal: 'SIGTERM' });
    expect(exitEvents).toBe(1);
    expect((await histogram(INSTRUMENTS.sandboxExecDuration.name))?.count).toBe(1);
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
    expect(await histogram(INSTRUMENTS.sandboxStartupDuration.name)).toBeUndefined();
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
    const startup = pointsOf<Histogram>(await m.collect(), INSTRUMENTS.sandboxStartupDuration.name);
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
    expect((await histogram(INSTRUMENTS.sandboxExecDuration.name))?.count).toBe(2);
  });
});
