// The package attacked the way its users break it: a provider that stops its own sampler, a
// process that should exit while a stop waits, callers that flood a record with attributes
// beyond the SDK's limit, a sample interval below the floor. Every case here failed before it
// was fixed.

import { readFileSync } from 'node:fs';
import { ATTR_SANDBOX_RESOURCE_FINAL } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import {
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
import { type TracerProvider, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  TracerProvider as SdkTracerProvider,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace';
import { captureSandboxDiag } from './support.js';

/** The default of `stopTimeoutSeconds`, as documented. */
const DEFAULT_STOP_TIMEOUT_SECONDS = 5;

const SAMPLE = 'gym.sandbox.resource.sample';
const carried: SandboxAttributes = Object.freeze({
  'nemo.gym.sandbox.provider': 'docker',
  'nemo.gym.sandbox.request.id': '6f1c2a4e-8d1b-4c7e-9a51-0c7d3e2b1f00',
});
const owned = (): SandboxHandle => ({ id: 'sbx-1', owned: true });

let t: SpanHarness;
let tracerProvider: TracerProvider;
let diagnostics: DiagCapture;
beforeEach(() => {
  t = createSpanHarness();
  tracerProvider = t.tracerProvider;
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

const finals = () => t.spans(SAMPLE).filter((span) => span.attributes[ATTR_SANDBOX_RESOURCE_FINAL] === true);

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
    sampler = new ResourceSampler(provider, owned(), carried, 1, { tracerProvider });
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
    sampler = new ResourceSampler(provider, owned(), carried, 60, { tracerProvider });
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
      tracerProvider,
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
      tracerProvider,
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
    const provider = new SdkTracerProvider({
      spanLimits: { attributeCountLimit },
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    return { tracerProvider: provider, spans: () => exporter.getFinishedSpans() };
  }
  const many = (n: number) =>
    Object.fromEntries(
      Array.from({ length: n }, (_, i) => [`nemo.gym.sandbox.tag_${String(i).padStart(2, '0')}`, `v${i}`]),
    );

  it('the request span keeps the request id and the requested shape when the SDK limit is reached', () => {
    const sdk = limited(8);
    recordRequest({ resources: { cpu: 1, memoryMib: 2, diskGib: 3, gpu: 0, gpuType: 'a100' } }, many(20), {
      tracerProvider: sdk.tracerProvider,
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
    const attributes = { ...many(32), 'nemo.gym.sandbox.request.id': 'r-1' };
    const sampler = new ResourceSampler({ resourceSample: () => flood }, owned(), attributes, 60, {
      tracerProvider: sdk.tracerProvider,
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
    expect(span!.attributes[ATTR_SANDBOX_RESOURCE_FINAL]).toBe(true);
  });

  it('the allocation span keeps the sandbox id and the allocation', async () => {
    const sdk = limited(4);
    await recordAllocation(
      owned(),
      { resourceAllocation: () => ({ source: 'docker', components: [] }) },
      { ...many(10), 'nemo.gym.sandbox.request.id': 'r-1' },
      { tracerProvider: sdk.tracerProvider },
    );
    expect(Object.keys(sdk.spans()[0]!.attributes)).toEqual([
      'nemo.gym.sandbox.request.id',
      'nemo.gym.sandbox.id',
      'nemo.gym.sandbox.allocation.source',
      'nemo.gym.sandbox.allocation.components',
    ]);
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
    const sampler = new ResourceSampler({ resourceSample: () => ({}) }, owned(), carried, 0.01, { tracerProvider });
    sampler.start();
    expect(sampler.state).toBe('idle');
    expect(jest.getTimerCount()).toBe(0);
    new ResourceSampler({}, owned(), carried, 0.01, { tracerProvider }).start();
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining('ResourceSampler intervalSeconds = 0.01 s is refused'),
    ]);
  });
});
