// The package attacked the way a hostile caller, provider or configuration would: samples
// that cannot be read, a provider that stops its own sampler, a process that should exit
// while a stop waits, callers that flood a record with attributes, a polluted
// Object.prototype, throwing option getters. Every case here failed before it was fixed.

import { readFileSync } from 'node:fs';
import { setTelemetryState } from '@gym/core';
import {
  ATTR_RESOURCE_FINAL,
  ATTR_SANDBOX_REQUEST_ID,
  DEFAULT_STOP_TIMEOUT_SECONDS,
  MAX_CALLER_ATTRIBUTES,
  MAX_CALLER_VALUE_LENGTH,
  type ResourceProvider,
  ResourceSampler,
  recordAllocation,
  recordRequest,
  type SandboxAttributes,
  type SandboxHandle,
  samplingInterval,
} from '@gym/sandbox-telemetry';
import { createSpanHarness, type DiagCapture, type SpanHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { context, type Tracer, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { captureSandboxDiag } from './support.js';

const SAMPLE = 'gym.sandbox.resource.sample';
const carried: SandboxAttributes = Object.freeze({
  'nemo.gym.sandbox.provider': 'docker',
  'nemo.gym.sandbox.request.id': '6f1c2a4e-8d1b-4c7e-9a51-0c7d3e2b1f00',
});
const owned = (): SandboxHandle => ({ id: 'sbx-1', owned: true });

let t: SpanHarness;
let tracer: Tracer;
let diagnostics: DiagCapture;
beforeEach(() => {
  t = createSpanHarness();
  tracer = t.tracer;
  diagnostics = captureSandboxDiag();
});
afterEach(() => {
  diagnostics.stop();
  jest.useRealTimers();
  trace.disable();
  setTelemetryState(undefined);
  for (const key of ['NEMO_GYM_OTEL_SPAN_GROUPS', 'NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS']) {
    delete process.env[key];
  }
});

const finals = () => t.spans(SAMPLE).filter((span) => span.attributes[ATTR_RESOURCE_FINAL] === true);

describe('a sample that cannot be read still ends in exactly one final record', () => {
  const throwingGetter = () => ({
    'nemo.gym.sandbox.resource.memory_mib': 1,
    get 'nemo.gym.sandbox.resource.cpu'(): number {
      throw new Error('getter exploded');
    },
  });
  // Not a thenable (`then` reads as undefined), so the sample is delivered, and then it cannot be read.
  const throwingProxy = () =>
    new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('ownKeys exploded');
        },
        get(_target, key) {
          if (key === 'then') return undefined;
          throw new Error('get exploded');
        },
      },
    );
  const revoked = () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  };

  it.each([
    ['a throwing getter', throwingGetter],
    ['a throwing Proxy', throwingProxy],
    ['a revoked Proxy', revoked],
  ])('%s as the final sample', async (_name, make) => {
    jest.useFakeTimers();
    const sampler = new ResourceSampler({ resourceSample: () => make() as never }, owned(), carried, 1, { tracer });
    sampler.start();
    await expect(sampler.stop()).resolves.toBeUndefined();
    expect(finals()).toHaveLength(1);
    expect(finals()[0]!.attributes['nemo.gym.sandbox.resource.sampler.errors']).toBe(1);
    expect(sampler.stats).toEqual({ samples: 1, errors: 1, dropped: 0, skipped: 0 });
  });

  it('as a regular sample: counted, no record, the loop and the final record go on', async () => {
    jest.useFakeTimers();
    let call = 0;
    const provider: ResourceProvider = {
      resourceSample: () =>
        ++call <= 2 ? (throwingProxy() as never) : { 'nemo.gym.sandbox.resource.memory_mib': call },
    };
    const sampler = new ResourceSampler(provider, owned(), carried, 1, { tracer });
    sampler.start();
    await jest.advanceTimersByTimeAsync(3000);
    await sampler.stop();
    expect(t.spans(SAMPLE).map((span) => span.attributes['nemo.gym.sandbox.resource.memory_mib'])).toEqual([3, 4]);
    expect(finals()).toHaveLength(1);
    expect(sampler.stats.errors).toBe(2);
    expect(diagnostics.lines('warn')).toEqual([expect.stringContaining('ownKeys exploded')]);
  });
});

describe('stop() called from inside the provider', () => {
  it('during a tick: the running sample becomes the final one, the provider never runs twice at once', async () => {
    jest.useFakeTimers();
    let sampler: ResourceSampler | undefined;
    let running = 0;
    let maxRunning = 0;
    let calls = 0;
    const inner: Promise<void>[] = [];
    const provider: ResourceProvider = {
      resourceSample: async () => {
        calls++;
        running++;
        maxRunning = Math.max(maxRunning, running);
        if (calls === 2) inner.push(sampler!.stop()); // the sandbox's owner stops it from inside a sample
        await Promise.resolve();
        running--;
        return { 'nemo.gym.sandbox.resource.memory_mib': calls };
      },
    };
    sampler = new ResourceSampler(provider, owned(), carried, 1, { tracer });
    sampler.start();
    await jest.advanceTimersByTimeAsync(2000);
    await Promise.all(inner);
    await jest.advanceTimersByTimeAsync(5000);
    expect(maxRunning).toBe(1);
    expect(calls).toBe(2);
    expect(finals()).toHaveLength(1);
    expect(finals()[0]!.attributes['nemo.gym.sandbox.resource.memory_mib']).toBe(2);
    expect(sampler.state).toBe('stopped');
  });

  it('during the final sample: the same promise, one final record, one provider call', async () => {
    jest.useFakeTimers();
    let sampler: ResourceSampler | undefined;
    let calls = 0;
    let innerStop: Promise<void> | undefined;
    const provider: ResourceProvider = {
      resourceSample: () => {
        calls++;
        innerStop = sampler!.stop();
        return { 'nemo.gym.sandbox.resource.memory_mib': 9 };
      },
    };
    sampler = new ResourceSampler(provider, owned(), carried, 60, { tracer });
    sampler.start();
    const outer = sampler.stop();
    expect(innerStop).toBe(outer);
    expect(sampler.state).toBe('stopping');
    await outer;
    expect(calls).toBe(1);
    expect(finals()).toHaveLength(1);
    expect(sampler.state).toBe('stopped');
  });
});

describe('the stop deadline', () => {
  it('never keeps the process alive while it waits for a sample that does not settle', async () => {
    const refTimers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    // Both counts are taken in one synchronous stretch (start and stop create their timers at
    // once), so no other timer can fire or be created in between: no settling wait is needed.
    const before = refTimers();
    const sampler = new ResourceSampler({ resourceSample: () => new Promise<never>(() => {}) }, owned(), carried, 60, {
      tracer,
      stopTimeoutSeconds: 0.05,
    });
    sampler.start();
    const stopping = sampler.stop(); // waits for a sample that never settles
    const during = refTimers();
    await stopping;
    expect(during).toBe(before);
    expect(finals()).toHaveLength(1);
    await t.tracerProvider.forceFlush(); // the exporter's answer to the final record, so nothing is left pending
  });

  it(`defaults to ${DEFAULT_STOP_TIMEOUT_SECONDS} s whatever the interval, as documented`, async () => {
    jest.useFakeTimers();
    const sampler = new ResourceSampler({ resourceSample: () => new Promise<never>(() => {}) }, owned(), carried, 1, {
      tracer,
    });
    sampler.start();
    let stopped = false;
    void sampler.stop().then(() => {
      stopped = true;
    });
    await jest.advanceTimersByTimeAsync(DEFAULT_STOP_TIMEOUT_SECONDS * 1000 - 1);
    expect(stopped).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(stopped).toBe(true);
    // The documentation of the option states the same default, and nothing else.
    const types = readFileSync(new URL('../src/types.ts', import.meta.url), 'utf8');
    const doc = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*readonly stopTimeoutSeconds/.exec(types)?.[1] ?? '';
    expect(doc).toContain(`Default: ${DEFAULT_STOP_TIMEOUT_SECONDS} s`);
    expect(doc).not.toMatch(/Default: the sampling interval/);
  });
});

describe("this package's own keys are never pushed out by caller attributes", () => {
  function limited(attributeCountLimit: number) {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({
      spanLimits: { attributeCountLimit },
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    return { tracer: provider.getTracer('limited'), spans: () => exporter.getFinishedSpans() };
  }
  const many = (n: number) =>
    Object.fromEntries(
      Array.from({ length: n }, (_, i) => [`nemo.gym.sandbox.tag_${String(i).padStart(2, '0')}`, `v${i}`]),
    );

  it('the request span keeps the request id and the requested shape when the SDK limit is reached', () => {
    const sdk = limited(8);
    recordRequest({ resources: { cpu: 1, memoryMib: 2, diskGib: 3, gpu: 0, gpuType: 'a100' } }, many(20), {
      tracer: sdk.tracer,
    });
    const [span] = sdk.spans();
    const keys = Object.keys(span!.attributes);
    expect(keys).toHaveLength(8);
    expect(keys.slice(0, 6)).toEqual([
      'nemo.gym.sandbox.request.id',
      'nemo.gym.sandbox.requested.cpu',
      'nemo.gym.sandbox.requested.memory_mib',
      'nemo.gym.sandbox.requested.disk_gib',
      'nemo.gym.sandbox.requested.gpu',
      'nemo.gym.sandbox.requested.gpu_type',
    ]);
    expect(span!.droppedAttributesCount).toBe(18);
  });

  it('the final sample keeps its flag and counters when the sample and the caller flood it', async () => {
    const sdk = limited(10);
    const flood = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`nemo.gym.sandbox.resource.v${i}`, i]));
    const attributes = { ...many(MAX_CALLER_ATTRIBUTES), 'nemo.gym.sandbox.request.id': 'r-1' };
    const sampler = new ResourceSampler({ resourceSample: () => flood }, owned(), attributes, 60, {
      tracer: sdk.tracer,
    });
    sampler.start();
    await sampler.stop();
    const [span] = sdk.spans();
    expect(Object.keys(span!.attributes).slice(0, 6)).toEqual([
      'nemo.gym.sandbox.request.id',
      'nemo.gym.sandbox.id',
      'nemo.gym.sandbox.resource.final',
      'nemo.gym.sandbox.resource.sampler.errors',
      'nemo.gym.sandbox.resource.sampler.dropped',
      'nemo.gym.sandbox.resource.sampler.skipped',
    ]);
    expect(span!.attributes[ATTR_RESOURCE_FINAL]).toBe(true);
  });

  it('the allocation span keeps the sandbox id and the allocation', async () => {
    const sdk = limited(4);
    await recordAllocation(
      owned(),
      { resourceAllocation: () => ({ source: 'docker', components: [] }) },
      { ...many(10), 'nemo.gym.sandbox.request.id': 'r-1' },
      { tracer: sdk.tracer },
    );
    expect(Object.keys(sdk.spans()[0]!.attributes)).toEqual([
      'nemo.gym.sandbox.request.id',
      'nemo.gym.sandbox.id',
      'nemo.gym.sandbox.allocation.source',
      'nemo.gym.sandbox.allocation.components',
    ]);
  });

  it(`carries at most ${MAX_CALLER_ATTRIBUTES} caller attributes, values cut at ${MAX_CALLER_VALUE_LENGTH} characters, with one warning each`, () => {
    const long = 'x'.repeat(10_000);
    const first = recordRequest({ resources: {} }, { ...many(40), 'nemo.gym.sandbox.note': long }, { tracer });
    recordRequest({ resources: {} }, { ...many(50), 'nemo.gym.sandbox.note': long }, { tracer });
    const callerKeys = Object.keys(first).filter((key) => key !== ATTR_SANDBOX_REQUEST_ID);
    expect(callerKeys).toHaveLength(MAX_CALLER_ATTRIBUTES);
    expect(callerKeys).toEqual(Object.keys(many(MAX_CALLER_ATTRIBUTES))); // the first ones, in order
    const cut = recordRequest({ resources: {} }, { 'nemo.gym.sandbox.note': long }, { tracer });
    expect(cut['nemo.gym.sandbox.note']).toBe('x'.repeat(MAX_CALLER_VALUE_LENGTH));
    expect(t.spans('gym.sandbox.request')[2]!.attributes['nemo.gym.sandbox.note']).toHaveLength(
      MAX_CALLER_VALUE_LENGTH,
    );
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining(`at most ${MAX_CALLER_ATTRIBUTES} are carried`),
      expect.stringContaining(`longer than ${MAX_CALLER_VALUE_LENGTH} characters were cut`),
    ]);
  });
});

describe('a polluted Object.prototype', () => {
  const pollution: Record<string, unknown> = {
    cpu: 0,
    memoryMib: 0,
    gpu: 0,
    diskGib: 0,
    gpuType: 'forged',
    resources: { cpu: 7 },
    designator: { kind: 'pod', id: 'forged' },
    scope: 'forged',
    requests: { cpu: 0 },
    owned: true,
    'nemo.gym.sandbox.forged': 'yes',
  };
  function pollute(): void {
    for (const [key, value] of Object.entries(pollution)) {
      Object.defineProperty(Object.prototype, key, { value, enumerable: true, configurable: true, writable: true });
    }
  }
  function clean(): void {
    for (const key of Object.keys(pollution)) delete (Object.prototype as Record<string, unknown>)[key];
  }
  function polluted<T>(fn: () => T): T {
    pollute();
    try {
      return fn();
    } finally {
      clean();
    }
  }
  /** Polluted until `fn`'s promise settles (the provider is asked, and its answer read, after an await). */
  async function pollutedAsync<T>(fn: () => Promise<T>): Promise<T> {
    pollute();
    try {
      return await fn();
    } finally {
      clean();
    }
  }

  it('neither breaks recordRequest nor invents a value (no invented 0)', () => {
    const carried = polluted(() =>
      recordRequest({ resources: { memoryMib: 512 } }, { 'nemo.gym.sandbox.provider': 'docker' }, { tracer }),
    );
    const [span] = t.spans('gym.sandbox.request');
    expect(span!.attributes).toEqual({
      'nemo.gym.sandbox.request.id': carried[ATTR_SANDBOX_REQUEST_ID],
      'nemo.gym.sandbox.requested.memory_mib': 512,
      'nemo.gym.sandbox.requested.unspecified': 'cpu,disk_gib,gpu,gpu_type',
      'nemo.gym.sandbox.provider': 'docker',
    });
    expect(Object.keys(carried)).toEqual(['nemo.gym.sandbox.request.id', 'nemo.gym.sandbox.provider']);
  });

  it('a spec without resources is still refused (the prototype has none to give)', () => {
    expect(() => polluted(() => recordRequest({} as never, undefined, { tracer }))).toThrow(
      'Invalid SandboxSpec: resources = undefined: must be an object',
    );
  });

  it('an allocation invents no designator, scope or amount', async () => {
    await pollutedAsync(() =>
      recordAllocation(
        { id: 'sbx-1', owned: true },
        { resourceAllocation: () => ({ source: 'docker', components: [{ name: 'main', requests: {}, limits: {} }] }) },
        {},
        { tracer },
      ),
    );
    const [span] = t.spans('gym.sandbox.allocation');
    expect(span?.attributes).toEqual({
      'nemo.gym.sandbox.id': 'sbx-1',
      'nemo.gym.sandbox.allocation.source': 'docker',
      'nemo.gym.sandbox.allocation.components': 'main',
      'nemo.gym.sandbox.allocation.component.main.requests.unspecified': 'cpu,disk_gib,gpu,gpu_type,memory_mib',
      'nemo.gym.sandbox.allocation.component.main.limits.unspecified': 'cpu,disk_gib,gpu,gpu_type,memory_mib',
    });
  });

  it('a handle without `owned` is not taken as owned', () => {
    expect(() => polluted(() => recordAllocation({ id: 'sbx-1' } as never, {}, {}, { tracer }))).toThrow(
      'owned = undefined: must be a boolean',
    );
  });
});

describe('a throwing option getter or context manager never fails the caller', () => {
  const throwing = (key: string, extra: object = {}) =>
    Object.defineProperty({ ...extra }, key, {
      enumerable: true,
      get() {
        throw new Error(`${key} getter exploded`);
      },
    });

  it('tracer, tracerProvider and context getters: reported once, treated as unset', () => {
    expect(recordRequest({ resources: {} }, undefined, throwing('tracer') as never)).toEqual({});
    expect(recordRequest({ resources: {} }, undefined, throwing('tracerProvider') as never)).toEqual({});
    const carried = recordRequest({ resources: {} }, undefined, throwing('context', { tracer }) as never);
    expect(carried[ATTR_SANDBOX_REQUEST_ID]).toBeDefined();
    expect(t.spans('gym.sandbox.request')).toHaveLength(1);
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining('reading option tracer threw'),
      expect.stringContaining('reading option tracerProvider threw'),
      expect.stringContaining('reading option context threw'),
    ]);
  });

  it('a context manager that throws: every call returns normally (the SDK itself may then drop the spans)', async () => {
    const broken = {
      active() {
        throw new Error('context manager down');
      },
      with: <F extends (...args: never[]) => unknown>(_c: unknown, fn: F) => fn(),
      bind: <T>(_c: unknown, target: T) => target,
      enable() {
        return this;
      },
      disable() {
        return this;
      },
    };
    context.setGlobalContextManager(broken as never);
    try {
      const carried = recordRequest({ resources: {} }, undefined, { tracer });
      expect(carried[ATTR_SANDBOX_REQUEST_ID]).toBeDefined();
      // Never rejects, whatever the context manager does.
      await recordAllocation(owned(), { resourceAllocation: () => ({ source: 'docker', components: [] }) }, carried, {
        tracer,
      });
      const sampler = new ResourceSampler({ resourceSample: () => ({}) }, owned(), carried, 60, { tracer });
      expect(() => sampler.start()).not.toThrow();
      await expect(sampler.stop()).resolves.toBeUndefined();
      expect(sampler.state).toBe('stopped');
    } finally {
      context.disable();
    }
    expect(diagnostics.lines('warn').join('\n')).toContain('context manager down');
  });

  it('a stopTimeoutSeconds getter: the default is used', () => {
    expect(() => new ResourceSampler({}, owned(), carried, 1, throwing('stopTimeoutSeconds') as never)).not.toThrow();
  });
});

describe('the sample interval: one grammar and a floor', () => {
  beforeEach(() => {
    trace.setGlobalTracerProvider(createSpanHarness().tracerProvider);
    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = 'sandbox';
  });

  it.each(['1e1', '0.05', '0.099'])('%p in the environment → 0 and one warning', (raw) => {
    process.env.NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS = raw;
    expect(samplingInterval()).toBe(0);
    expect(samplingInterval()).toBe(0);
    expect(diagnostics.lines('warn')).toEqual([expect.stringContaining(`="${raw}" is not valid`)]);
  });

  it('0.1, the floor itself, is accepted', () => {
    process.env.NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS = '0.1';
    expect(samplingInterval()).toBe(0.1);
  });

  it('a published interval below the floor → 0 and one warning', () => {
    setTelemetryState({
      metricsExporting: false,
      tracesExporting: true,
      spanGroups: ['sandbox'],
      orchestrator: false,
      sandboxSampleIntervalSeconds: 0.05,
    });
    expect(samplingInterval()).toBe(0);
    expect(samplingInterval()).toBe(0);
    expect(diagnostics.lines('warn')).toEqual([expect.stringContaining('0.05 s is refused')]);
  });

  it('a sampler built with an interval below the floor does not run, with one warning', () => {
    jest.useFakeTimers();
    const sampler = new ResourceSampler({ resourceSample: () => ({}) }, owned(), carried, 0.01, { tracer });
    sampler.start();
    expect(sampler.state).toBe('idle');
    expect(jest.getTimerCount()).toBe(0);
    new ResourceSampler({}, owned(), carried, 0.01, { tracer }).start();
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining('ResourceSampler intervalSeconds = 0.01 s is refused'),
    ]);
  });
});
