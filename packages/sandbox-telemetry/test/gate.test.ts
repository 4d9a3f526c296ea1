// Gate first: with nothing exporting, the recorders return before reading their inputs or
// building anything, and no span exists anywhere. With a globally registered SDK they
// write only when traces export and the `sandbox` span group is on.

import { ATTR_SANDBOX_REQUEST_ID } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import {
  type ResourceProvider,
  ResourceSampler,
  recordAllocation,
  recordRequest,
  type SandboxHandle,
} from '@gym/sandbox-telemetry';
import { createSpanHarness, type SpanHarness } from '@gym/test-kit';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { trace } from '@opentelemetry/api';

/** An object whose every read throws: proof that a code path never looked at it. */
const untouchable = new Proxy(
  {},
  {
    get(_target, key) {
      throw new Error(`read ${String(key)} below the gate`);
    },
    ownKeys() {
      throw new Error('enumerated below the gate');
    },
  },
) as never;

afterEach(() => {
  trace.disable();
  setTelemetryState(undefined);
  delete process.env.NEMO_GYM_OTEL_SPAN_GROUPS;
  jest.useRealTimers();
});

function registerGlobal(): SpanHarness {
  const t = createSpanHarness();
  trace.setGlobalTracerProvider(t.tracerProvider);
  return t;
}

/** Exercises every recorder once; returns the provider calls it saw. */
async function exerciseEverything(): Promise<{ carried: object; calls: string[]; timersLeft: number }> {
  const calls: string[] = [];
  const provider: ResourceProvider = {
    resourceAllocation: () => {
      calls.push('allocation');
      return { source: 'docker', components: [] };
    },
    resourceSample: () => {
      calls.push('sample');
      return { 'nemo.gym.sandbox.resource.memory_mib': 1 };
    },
  };
  const handle: SandboxHandle = { id: 'sbx-1', owned: true };
  const carried = recordRequest({ resources: { cpu: 1 } }, { 'nemo.gym.sandbox.provider': 'docker' });
  await recordAllocation(handle, provider, carried);
  jest.useFakeTimers();
  const sampler = new ResourceSampler(provider, handle, carried, 1);
  sampler.start();
  await jest.advanceTimersByTimeAsync(3000);
  await sampler.stop();
  // InMemorySpanExporter answers through setTimeout(0); run those, then nothing may remain.
  await jest.runOnlyPendingTimersAsync();
  const timersLeft = jest.getTimerCount();
  jest.useRealTimers();
  return { carried, calls, timersLeft };
}

describe('off: nothing registered, nothing published', () => {
  it('recorders return before touching their inputs', async () => {
    const carried = recordRequest(untouchable, untouchable);
    expect(carried).toEqual({});
    expect(Object.isFrozen(carried)).toBe(true);
    expect(recordRequest(untouchable)).toBe(carried); // one shared object: nothing allocated per call
    await expect(recordAllocation(untouchable, untouchable, untouchable)).resolves.toBeUndefined();
    const sampler = new ResourceSampler(untouchable, untouchable, untouchable, 1);
    sampler.start();
    expect(sampler.state).toBe('idle');
    await sampler.stop();
    expect(sampler.stats).toEqual({ samples: 0, errors: 0, dropped: 0, skipped: 0 });
  });

  it('providers are never asked and no timer is left', async () => {
    const { calls, carried, timersLeft } = await exerciseEverything();
    expect(calls).toEqual([]);
    expect(carried).toEqual({});
    expect(timersLeft).toBe(0);
  });
});

describe('a globally registered SDK', () => {
  it('with no published state: writes only when NEMO_GYM_OTEL_SPAN_GROUPS enables sandbox', async () => {
    const t = registerGlobal();
    await exerciseEverything(); // span groups default to `default`: no sandbox
    expect(t.spans()).toEqual([]);

    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = 'default,sandbox';
    const { carried, calls, timersLeft } = await exerciseEverything();
    expect(calls).toEqual(['allocation', 'sample', 'sample', 'sample', 'sample']);
    expect(timersLeft).toBe(0);
    expect(t.spans().map((span) => span.name)).toEqual([
      'gym.sandbox.request',
      'gym.sandbox.allocation',
      'gym.sandbox.resource.sample',
      'gym.sandbox.resource.sample',
      'gym.sandbox.resource.sample',
      'gym.sandbox.resource.sample',
    ]);
    for (const span of t.spans()) {
      expect(span.attributes[ATTR_SANDBOX_REQUEST_ID]).toBe(
        (carried as Record<string, unknown>)[ATTR_SANDBOX_REQUEST_ID],
      );
    }
  });

  it('with a published state: follows its tracesExporting and span groups', async () => {
    const t = registerGlobal();
    setTelemetryState({ metricsExporting: true, tracesExporting: true, spanGroups: ['server'], orchestrator: false });
    expect((await exerciseEverything()).calls).toEqual([]);
    setTelemetryState({ metricsExporting: true, tracesExporting: false, spanGroups: ['sandbox'], orchestrator: false });
    expect((await exerciseEverything()).calls).toEqual([]);
    expect(t.spans()).toEqual([]);
    setTelemetryState({ metricsExporting: false, tracesExporting: true, spanGroups: ['sandbox'], orchestrator: false });
    await exerciseEverything();
    expect(t.spans('gym.sandbox.request')).toHaveLength(1);
  });

  it('a re-registered SDK receives the records (the global tracer is not cached past its provider)', async () => {
    process.env.NEMO_GYM_OTEL_SPAN_GROUPS = 'sandbox';
    const first = registerGlobal();
    recordRequest({ resources: {} });
    trace.disable();
    const second = registerGlobal();
    recordRequest({ resources: {} });
    expect(first.spans()).toHaveLength(1);
    expect(second.spans()).toHaveLength(1);
  });
});
