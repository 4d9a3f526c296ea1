import { ATTR_SANDBOX_RESOURCE_FINAL } from '@gym/constants';
import {
  type ResourceProvider,
  ResourceSampler,
  type SandboxAttributes,
  type SandboxHandle,
} from '@gym/sandbox-telemetry';
import { createSpanHarness, type SpanHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { context, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { captureSandboxDiag, expectSandboxAttributes, providerOf } from './support.js';

const SAMPLE = 'gym.sandbox.resource.sample';
const carried: SandboxAttributes = Object.freeze({
  'nemo.gym.sandbox.provider': 'docker',
  'nemo.gym.sandbox.request.id': '6f1c2a4e-8d1b-4c7e-9a51-0c7d3e2b1f00',
});

let t: SpanHarness;
let tracerProvider: TracerProvider;
beforeEach(() => {
  jest.useFakeTimers();
  t = createSpanHarness();
  tracerProvider = t.tracerProvider;
});
afterEach(() => {
  context.disable();
  jest.useRealTimers();
});

const finals = (spans: ReadableSpan[]) => spans.filter((span) => span.attributes[ATTR_SANDBOX_RESOURCE_FINAL] === true);
const regular = (spans: ReadableSpan[]) =>
  spans.filter((span) => span.attributes[ATTR_SANDBOX_RESOURCE_FINAL] === undefined);

/** A provider returning a growing memory value; counts calls and concurrent calls. */
function countingProvider(delayMs = 0) {
  const seen = { calls: 0, concurrent: 0, maxConcurrent: 0 };
  const provider: ResourceProvider = {
    resourceSample: async () => {
      seen.calls++;
      seen.concurrent++;
      seen.maxConcurrent = Math.max(seen.maxConcurrent, seen.concurrent);
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      seen.concurrent--;
      return { 'nemo.gym.sandbox.resource.memory_mib': 100 + seen.calls };
    },
  };
  return { provider, seen };
}

/** A provider whose samples settle only when the test says so. */
function manualProvider() {
  const waiting: Array<(value: SandboxAttributes) => void> = [];
  let calls = 0;
  const provider: ResourceProvider = {
    resourceSample: () => {
      calls++;
      return new Promise<SandboxAttributes>((resolve) => waiting.push(resolve));
    },
  };
  return {
    provider,
    get calls() {
      return calls;
    },
    settleNext(value: SandboxAttributes) {
      waiting.shift()!(value);
    },
  };
}

function owned(extra: Partial<SandboxHandle> = {}): SandboxHandle {
  return { id: 'sbx-1', owned: true, ...extra };
}

describe('ResourceSampler loop', () => {
  it('writes one sample per interval, parented to the handle context, carrying the identity', async () => {
    const parent = t.parent('sandbox.create');
    const { provider } = countingProvider();
    const sampler = new ResourceSampler(provider, owned({ context: parent.context }), carried, 2, { tracerProvider });
    sampler.start();
    expect(sampler.state).toBe('running');
    await jest.advanceTimersByTimeAsync(1999);
    expect(t.spans()).toEqual([]); // the first sample comes after one interval
    await jest.advanceTimersByTimeAsync(6001);
    const spans = t.spans(SAMPLE);
    expect(spans.map((span) => span.attributes['nemo.gym.sandbox.resource.memory_mib'])).toEqual([101, 102, 103, 104]);
    for (const span of spans) {
      expect(span.attributes).toEqual({
        ...carried,
        'nemo.gym.sandbox.id': 'sbx-1',
        'nemo.gym.sandbox.resource.memory_mib': expect.any(Number),
      });
      expect(span.parentSpanContext?.spanId).toBe(parent.span.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(parent.span.spanContext().traceId);
      expectSandboxAttributes(span);
    }
    expect(sampler.stats).toEqual({ samples: 4, errors: 0, dropped: 0, skipped: 0 });
    await sampler.stop();
  });

  it('without handle.context, records are parented to the context active at start()', async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const parent = t.parent('sandbox.create');
    const sampler = new ResourceSampler(countingProvider().provider, owned(), carried, 1, { tracerProvider });
    context.with(parent.context, () => sampler.start());
    await jest.advanceTimersByTimeAsync(1000);
    await sampler.stop();
    expect(t.spans(SAMPLE).map((span) => span.parentSpanContext?.spanId)).toEqual([
      parent.span.spanContext().spanId,
      parent.span.spanContext().spanId,
    ]);
  });

  it('start() is idempotent: two calls run one loop', async () => {
    const { provider, seen } = countingProvider();
    const sampler = new ResourceSampler(provider, owned(), carried, 1, { tracerProvider });
    sampler.start();
    sampler.start();
    await jest.advanceTimersByTimeAsync(5000);
    expect(seen.calls).toBe(5);
    expect(t.spans(SAMPLE)).toHaveLength(5);
    await sampler.stop();
  });
});

describe('stop()', () => {
  it('writes exactly one final record, with a last sample and the counters, and nothing after it', async () => {
    const { provider } = countingProvider();
    const sampler = new ResourceSampler(provider, owned(), carried, 1, { tracerProvider });
    sampler.start();
    await jest.advanceTimersByTimeAsync(3000);
    const first = sampler.stop();
    const second = sampler.stop();
    expect(second).toBe(first);
    await first;
    await sampler.stop();
    await jest.advanceTimersByTimeAsync(10_000);
    sampler.start(); // a stopped sampler stays stopped
    await jest.advanceTimersByTimeAsync(10_000);
    const spans = t.spans(SAMPLE);
    expect(regular(spans)).toHaveLength(3);
    expect(finals(spans)).toHaveLength(1);
    expect(spans.at(-1)!.attributes).toEqual({
      ...carried,
      'nemo.gym.sandbox.id': 'sbx-1',
      'nemo.gym.sandbox.resource.memory_mib': 104,
      'nemo.gym.sandbox.resource.final': true,
      'nemo.gym.sandbox.resource.sampler.errors': 0,
      'nemo.gym.sandbox.resource.sampler.dropped': 0,
      'nemo.gym.sandbox.resource.sampler.skipped': 0,
    });
    expect(sampler.state).toBe('stopped');
    expect(sampler.stats.samples).toBe(4);
  });

  it('a sampler that never started records nothing at stop', async () => {
    const sampler = new ResourceSampler(countingProvider().provider, owned(), carried, 1, { tracerProvider });
    await sampler.stop();
    sampler.start();
    await jest.advanceTimersByTimeAsync(5000);
    expect(t.spans()).toEqual([]);
    expect(sampler.state).toBe('stopped');
  });

  it('stop during a slow tick: exactly one final record, made of the running sample, no second provider call', async () => {
    const manual = manualProvider();
    const sampler = new ResourceSampler(manual.provider, owned(), carried, 1, { tracerProvider });
    sampler.start();
    await jest.advanceTimersByTimeAsync(1000); // tick 1 starts and hangs
    expect(manual.calls).toBe(1);
    let stopped = false;
    const stopping = sampler.stop().then(() => {
      stopped = true;
    });
    await jest.advanceTimersByTimeAsync(100);
    expect(stopped).toBe(false);
    expect(sampler.state).toBe('stopping');
    manual.settleNext({ 'nemo.gym.sandbox.resource.memory_mib': 7 });
    await stopping;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(manual.calls).toBe(1);
    const spans = t.spans(SAMPLE);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.attributes['nemo.gym.sandbox.resource.final']).toBe(true);
    expect(spans[0]!.attributes['nemo.gym.sandbox.resource.memory_mib']).toBe(7);
  });

  it('a sample that never settles: stop() gives up after stopTimeoutSeconds and still writes one final record', async () => {
    const manual = manualProvider();
    const sampler = new ResourceSampler(manual.provider, owned(), carried, 1, {
      tracerProvider,
      stopTimeoutSeconds: 0.5,
    });
    sampler.start();
    await jest.advanceTimersByTimeAsync(3000); // tick 1 hangs, ticks 2 and 3 are skipped
    let stopped = false;
    void sampler.stop().then(() => {
      stopped = true;
    });
    await jest.advanceTimersByTimeAsync(499);
    expect(stopped).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(stopped).toBe(true);
    manual.settleNext({ 'nemo.gym.sandbox.resource.memory_mib': 1 }); // too late: ignored
    await jest.advanceTimersByTimeAsync(5000);
    const spans = t.spans(SAMPLE);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.attributes).toEqual({
      ...carried,
      'nemo.gym.sandbox.id': 'sbx-1',
      'nemo.gym.sandbox.resource.final': true,
      'nemo.gym.sandbox.resource.sampler.errors': 1,
      'nemo.gym.sandbox.resource.sampler.dropped': 0,
      'nemo.gym.sandbox.resource.sampler.skipped': 2,
    });
    expect(sampler.stats).toEqual({ samples: 1, errors: 1, dropped: 0, skipped: 2 });
  });

  it('the default stop timeout is 5 s', async () => {
    const sampler = new ResourceSampler(manualProvider().provider, owned(), carried, 60, { tracerProvider });
    sampler.start();
    let stopped = false;
    void sampler.stop().then(() => {
      stopped = true;
    });
    await jest.advanceTimersByTimeAsync(4999);
    expect(stopped).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(stopped).toBe(true);
    expect(finals(t.spans(SAMPLE))).toHaveLength(1);
  });
});

describe('a slow provider', () => {
  it('never runs two samples at once; ticks that find one running are skipped and counted', async () => {
    const { provider, seen } = countingProvider(2500);
    const sampler = new ResourceSampler(provider, owned(), carried, 1, { tracerProvider });
    sampler.start();
    // t=1 call (until 3.5), 2 and 3 skipped; t=4 call (until 6.5), 5 and 6 skipped; t=7 call (until 9.5),
    // 8 and 9 skipped; t=10 call, still running.
    await jest.advanceTimersByTimeAsync(10_000);
    expect(seen.maxConcurrent).toBe(1);
    expect(seen.calls).toBe(4);
    expect(t.spans(SAMPLE)).toHaveLength(3);
    expect(sampler.stats).toEqual({ samples: 3, errors: 0, dropped: 0, skipped: 6 });
    const stopping = sampler.stop(); // the running sample (t=10, until 12.5) becomes the final one
    await jest.advanceTimersByTimeAsync(2500);
    await stopping;
    expect(seen.calls).toBe(4);
    expect(seen.maxConcurrent).toBe(1);
    expect(finals(t.spans(SAMPLE))).toHaveLength(1);
    expect(finals(t.spans(SAMPLE))[0]!.attributes['nemo.gym.sandbox.resource.sampler.skipped']).toBe(6);
  });
});

describe('provider trouble is dropped and counted, never thrown', () => {
  it.each([
    [
      'throws',
      () => {
        throw new Error('boom');
      },
    ],
    ['rejects', () => Promise.reject(new Error('boom'))],
    ['returns null', () => null],
    ['returns an array', () => [1, 2]],
    ['returns a number', () => 42],
  ])('a provider that %s: no record, errors counted, the loop goes on', async (_name, failure) => {
    let call = 0;
    const provider: ResourceProvider = {
      resourceSample: () => {
        call++;
        return call <= 2
          ? (failure() as unknown as SandboxAttributes)
          : { 'nemo.gym.sandbox.resource.memory_mib': call };
      },
    };
    const sampler = new ResourceSampler(provider, owned(), carried, 1, { tracerProvider });
    sampler.start();
    await jest.advanceTimersByTimeAsync(3000);
    await sampler.stop();
    expect(regular(t.spans(SAMPLE)).map((span) => span.attributes['nemo.gym.sandbox.resource.memory_mib'])).toEqual([
      3,
    ]);
    expect(finals(t.spans(SAMPLE))).toHaveLength(1);
    expect(sampler.stats).toEqual({ samples: 2, errors: 2, dropped: 0, skipped: 0 });
  });

  it('a final sample that fails still gives the one final record, without values', async () => {
    const provider: ResourceProvider = {
      resourceSample: () => {
        throw new Error('process gone');
      },
    };
    const sampler = new ResourceSampler(provider, owned(), carried, 1, { tracerProvider });
    sampler.start();
    await sampler.stop();
    const spans = t.spans(SAMPLE);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.attributes['nemo.gym.sandbox.resource.final']).toBe(true);
    expect(spans[0]!.attributes['nemo.gym.sandbox.resource.sampler.errors']).toBe(1);
    expect(spans[0]!.attributes['nemo.gym.sandbox.resource.memory_mib']).toBeUndefined();
  });

  it('bad values are dropped one by one and counted; good ones are kept', async () => {
    const sample = {
      'nemo.gym.sandbox.resource.memory_mib': 12.5,
      'nemo.gym.sandbox.resource.oom': false,
      'nemo.gym.sandbox.resource.state': 'running',
      'nemo.gym.sandbox.resource.cpu': Number.NaN,
      'nemo.gym.sandbox.resource.disk': Number.POSITIVE_INFINITY,
      'nemo.gym.sandbox.resource.obj': { a: 1 },
      'nemo.gym.sandbox.resource.list': [1, 2],
      'nemo.gym.sandbox.resource.none': null,
      'nemo.gym.sandbox.resource.big': 10n,
      'process.memory': 5,
      'nemo.gym.sandbox.resource.final': true,
      'nemo.gym.sandbox.resource.sampler.errors': 0,
      'nemo.gym.sandbox.request.id': 'forged',
      'nemo.gym.sandbox.id': 'forged',
      'nemo.gym.sandbox.allocation.source': 'forged',
      'nemo.gym.sandbox.requested.cpu': 1,
      'nemo.gym.sandbox.provider': 'forged', // a carried key
    };
    const sampler = new ResourceSampler({ resourceSample: () => sample as never }, owned(), carried, 1, {
      tracerProvider,
    });
    sampler.start();
    await jest.advanceTimersByTimeAsync(1000);
    const [span] = t.spans(SAMPLE);
    expect(span!.attributes).toEqual({
      ...carried,
      'nemo.gym.sandbox.id': 'sbx-1',
      'nemo.gym.sandbox.resource.memory_mib': 12.5,
      'nemo.gym.sandbox.resource.oom': false,
      'nemo.gym.sandbox.resource.state': 'running',
    });
    expect(sampler.stats).toEqual({ samples: 1, errors: 0, dropped: 14, skipped: 0 });
    await sampler.stop();
    expect(sampler.stats.dropped).toBe(28);
    for (const span of t.spans()) expectSandboxAttributes(span);
  });

  it('a sample with no good value writes no regular record', async () => {
    const sampler = new ResourceSampler({ resourceSample: () => ({ 'x.y': 1 }) }, owned(), carried, 1, {
      tracerProvider,
    });
    sampler.start();
    await jest.advanceTimersByTimeAsync(2000);
    expect(t.spans()).toEqual([]);
    expect(sampler.stats).toEqual({ samples: 0, errors: 0, dropped: 2, skipped: 0 });
    await sampler.stop();
    expect(finals(t.spans(SAMPLE))).toHaveLength(1);
  });

  it('a tracer that throws is counted and logged once, never thrown', async () => {
    const broken = {
      startSpan: () => {
        throw new Error('tracer down');
      },
    } as unknown as Tracer;
    const sampler = new ResourceSampler(countingProvider().provider, owned(), carried, 1, {
      tracerProvider: providerOf(broken),
    });
    sampler.start();
    await jest.advanceTimersByTimeAsync(3000);
    await expect(sampler.stop()).resolves.toBeUndefined();
    expect(sampler.stats).toEqual({ samples: 0, errors: 4, dropped: 0, skipped: 0 });
  });
});

describe('only the owner samples', () => {
  it('a borrowed handle starts no loop, never asks the provider and records nothing', async () => {
    const { provider, seen } = countingProvider();
    const sampler = new ResourceSampler(provider, { id: 'sbx-1', owned: false }, carried, 1, { tracerProvider });
    sampler.start();
    expect(sampler.state).toBe('idle');
    await jest.advanceTimersByTimeAsync(5000);
    await sampler.stop();
    expect(seen.calls).toBe(0);
    expect(t.spans()).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('two samplers over one sandbox (owner + attached) sample it once', async () => {
    const { provider, seen } = countingProvider();
    const owner = new ResourceSampler(provider, { id: 'sbx-1', owned: true }, carried, 1, { tracerProvider });
    const attached = new ResourceSampler(provider, { id: 'sbx-1', owned: false }, carried, 1, { tracerProvider });
    owner.start();
    attached.start();
    await jest.advanceTimersByTimeAsync(3000);
    await Promise.all([owner.stop(), attached.stop()]);
    expect(seen.calls).toBe(4);
    expect(t.spans(SAMPLE)).toHaveLength(4);
  });

  it('interval 0 or no resourceSample: nothing starts', async () => {
    const zero = new ResourceSampler(countingProvider().provider, owned(), carried, 0, { tracerProvider });
    const none = new ResourceSampler({}, owned(), carried, 1, { tracerProvider });
    zero.start();
    none.start();
    expect([zero.state, none.state]).toEqual(['idle', 'idle']);
    await Promise.all([zero.stop(), none.stop()]);
    expect(t.spans()).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('timers', () => {
  it('1,000 samplers started and stopped leave no timer behind', async () => {
    const { provider } = countingProvider();
    const samplers = Array.from(
      { length: 1000 },
      (_, i) =>
        new ResourceSampler(provider, { id: `sbx-${i}`, owned: true }, carried, 1 + (i % 7), { tracerProvider }),
    );
    for (const sampler of samplers) sampler.start();
    expect(jest.getTimerCount()).toBe(1000);
    await jest.advanceTimersByTimeAsync(2000);
    await Promise.all(samplers.map((sampler) => sampler.stop()));
    // InMemorySpanExporter answers through setTimeout(0); run those, then nothing may remain.
    await jest.runOnlyPendingTimersAsync();
    expect(jest.getTimerCount()).toBe(0);
    expect(finals(t.spans(SAMPLE))).toHaveLength(1000);
    expect(samplers.every((sampler) => sampler.state === 'stopped')).toBe(true);
  });

  it('a running sampler does not keep the process alive (its timers are unref()ed)', async () => {
    jest.useRealTimers();
    const refTimers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    // Every count is taken in one synchronous stretch with the calls that create the timers (the
    // loop's interval in start(), the deadline in stop()), so no other timer can fire or be
    // created in between: the counts differ only by what the samplers left ref'd.
    const before = refTimers();
    const samplers = Array.from(
      { length: 10 },
      (_, i) =>
        new ResourceSampler(countingProvider().provider, { id: `s${i}`, owned: true }, carried, 30, { tracerProvider }),
    );
    let running = Number.NaN;
    let stopping = Number.NaN;
    const stops: Promise<void>[] = [];
    try {
      for (const sampler of samplers) sampler.start();
      running = refTimers();
      for (const sampler of samplers) stops.push(sampler.stop());
      stopping = refTimers();
    } finally {
      // Stopped whatever happens: a ref'd timer left behind would keep jest from exiting.
      await Promise.all([...stops, ...samplers.map((sampler) => sampler.stop())]);
    }
    expect(samplers.every((sampler) => sampler.stats.samples === 1)).toBe(true); // they did run
    expect(running).toBe(before);
    expect(stopping).toBe(before);
    await t.tracerProvider.forceFlush(); // the exporter's answers to the final records, so nothing is left pending
  });
});

describe('exactly one final record, whatever the interleaving', () => {
  /** Small deterministic PRNG (mulberry32), so a failure reproduces. */
  function random(seed: number) {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let x = Math.imul(a ^ (a >>> 15), 1 | a);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
    };
  }

  it('200 random schedules of start, stop, time and provider delays/failures', async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = random(seed);
      const local = createSpanHarness();
      const delays = Array.from({ length: 50 }, () => Math.floor(next() * 3500));
      let call = 0;
      const provider: ResourceProvider = {
        resourceSample: async () => {
          const delay = delays[call++ % delays.length]!;
          await new Promise((resolve) => setTimeout(resolve, delay));
          if (delay % 5 === 0) throw new Error('flaky');
          return { 'nemo.gym.sandbox.resource.memory_mib': delay };
        },
      };
      const sampler = new ResourceSampler(provider, owned(), carried, 1, {
        tracerProvider: providerOf(local.tracerProvider.getTracer('t')),
        stopTimeoutSeconds: 2,
      });
      let started = false;
      const stops: Promise<void>[] = [];
      for (let step = 0; step < 12; step++) {
        const action = next();
        if (action < 0.3) {
          sampler.start();
          started ||= stops.length === 0;
        } else if (action < 0.45) stops.push(sampler.stop());
        else await jest.advanceTimersByTimeAsync(Math.floor(next() * 4000));
      }
      stops.push(sampler.stop());
      await jest.advanceTimersByTimeAsync(4000);
      await Promise.all(stops);
      const spans = local.spans(SAMPLE);
      expect({ seed, finals: finals(spans).length }).toEqual({ seed, finals: started ? 1 : 0 });
      if (started) expect(spans.at(-1)!.attributes[ATTR_SANDBOX_RESOURCE_FINAL]).toBe(true);
      expect({ seed, samples: sampler.stats.samples }).toEqual({ seed, samples: spans.length });
    }
  });
});

describe('arguments', () => {
  it.each([
    [-1, 'number -1'],
    [Number.NaN, 'number NaN'],
    [Number.POSITIVE_INFINITY, 'number Infinity'],
    [3_000_000, 'number 3000000'],
  ])('an interval of %p is refused with one warning: the sampler does not run', (interval, shown) => {
    const diagnostics = captureSandboxDiag();
    const sampler = new ResourceSampler(countingProvider().provider, owned(), carried, interval, { tracerProvider });
    sampler.start();
    expect(sampler.state).toBe('idle');
    expect(jest.getTimerCount()).toBe(0);
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining(`intervalSeconds = ${shown.replace('number ', '')} s is refused`),
    ]);
    diagnostics.stop();
  });

  it.each([-2, Number.NaN, 3_000_000])(
    'a stop timeout of %p is a programming error: RangeError',
    (stopTimeoutSeconds) => {
      expect(() => new ResourceSampler({}, owned(), carried, 1, { stopTimeoutSeconds })).toThrow(
        'stopTimeoutSeconds must be a number of seconds from 0 to 2147483.647',
      );
    },
  );
});
