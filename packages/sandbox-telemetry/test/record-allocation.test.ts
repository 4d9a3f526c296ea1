import {
  type ResourceAllocation,
  type ResourceProvider,
  recordAllocation,
  recordRequest,
  type SandboxHandle,
} from '@gym/sandbox-telemetry';
import { createSpanHarness, type DiagCapture, type SpanHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { TracerProvider } from '@opentelemetry/api';
import { captureSandboxDiag, expectSandboxAttributes } from './support.js';

const allocation: ResourceAllocation = {
  source: 'docker',
  designator: { kind: 'container', id: 'c0ffee' },
  components: [{ name: 'main', requests: {}, limits: { cpu: 1, memoryMib: 512 } }],
};

let t: SpanHarness;
let tracerProvider: TracerProvider;
let diagnostics: DiagCapture;
beforeEach(() => {
  t = createSpanHarness();
  tracerProvider = t.tracerProvider;
  diagnostics = captureSandboxDiag();
});
afterEach(() => diagnostics.stop());

describe('recordAllocation', () => {
  it('writes one gym.sandbox.allocation span with the carried identity, the sandbox id and the allocation', async () => {
    const parent = t.parent('sandbox.create');
    const handle: SandboxHandle = { id: 'sbx-1', owned: true, context: parent.context };
    const carried = recordRequest(
      { resources: { cpu: 1 } },
      { 'nemo.gym.sandbox.provider': 'docker' },
      { tracerProvider },
    );
    const provider: ResourceProvider = { resourceAllocation: async () => allocation };
    await expect(recordAllocation(handle, provider, carried, { tracerProvider })).resolves.toEqual(allocation);
    const [span] = t.spans('gym.sandbox.allocation');
    expect(span!.attributes).toEqual({
      ...carried,
      'nemo.gym.sandbox.id': 'sbx-1',
      'nemo.gym.sandbox.allocation.source': 'docker',
      'nemo.gym.sandbox.allocation.designator.kind': 'container',
      'nemo.gym.sandbox.allocation.designator.id': 'c0ffee',
      'nemo.gym.sandbox.allocation.components': 'main',
      'nemo.gym.sandbox.allocation.component.main.requests.unspecified': 'cpu,disk_gib,gpu,gpu_type,memory_mib',
      'nemo.gym.sandbox.allocation.component.main.limits.cpu': 1,
      'nemo.gym.sandbox.allocation.component.main.limits.memory_mib': 512,
      'nemo.gym.sandbox.allocation.component.main.limits.unspecified': 'disk_gib,gpu,gpu_type',
    });
    expect(span!.parentSpanContext?.spanId).toBe(parent.span.spanContext().spanId);
    expectSandboxAttributes(span!);
  });

  it('two providers with the same typed allocation write the same keys', async () => {
    const syncProvider: ResourceProvider = { resourceAllocation: () => ({ ...allocation }) };
    const asyncProvider: ResourceProvider = {
      resourceAllocation: async () => JSON.parse(JSON.stringify(allocation)) as ResourceAllocation,
    };
    await recordAllocation({ id: 'a', owned: true }, syncProvider, {}, { tracerProvider });
    await recordAllocation({ id: 'b', owned: true }, asyncProvider, {}, { tracerProvider });
    const [a, b] = t.spans('gym.sandbox.allocation');
    expect(Object.keys(b!.attributes)).toEqual(Object.keys(a!.attributes));
  });

  it('a borrowed handle records nothing and the provider is not asked', async () => {
    let asked = false;
    const provider: ResourceProvider = {
      resourceAllocation: () => {
        asked = true;
        return allocation;
      },
    };
    await expect(
      recordAllocation({ id: 'x', owned: false }, provider, {}, { tracerProvider }),
    ).resolves.toBeUndefined();
    expect(asked).toBe(false);
    expect(t.spans()).toEqual([]);
  });

  it('a provider without resourceAllocation records nothing', async () => {
    await expect(recordAllocation({ id: 'x', owned: true }, {}, {}, { tracerProvider })).resolves.toBeUndefined();
    expect(t.spans()).toEqual([]);
  });

  it('provider failures are logged once, never thrown, never recorded', async () => {
    const throwing: ResourceProvider = {
      resourceAllocation: () => {
        throw new Error('api down');
      },
    };
    const rejecting: ResourceProvider = { resourceAllocation: () => Promise.reject(new Error('timeout')) };
    for (const provider of [throwing, rejecting, throwing]) {
      await expect(
        recordAllocation({ id: 'x', owned: true }, provider, {}, { tracerProvider }),
      ).resolves.toBeUndefined();
    }
    expect(t.spans()).toEqual([]);
    expect(diagnostics.lines('warn')).toHaveLength(1);
    expect(diagnostics.lines('warn')[0]).toContain('a sandbox allocation could not be told or written');
    expect(diagnostics.lines('warn')[0]).toContain('api down');
  });

  it('a malformed allocation is recorded without its bad values, each dropped with one warning', async () => {
    const malformed: ResourceProvider = {
      resourceAllocation: () => ({
        source: 'docker',
        components: [{ name: 'main', requests: { cpu: -1 }, limits: {} }],
      }),
    };
    await recordAllocation({ id: 'x', owned: true }, malformed, {}, { tracerProvider });
    const [span] = t.spans('gym.sandbox.allocation');
    expect(span!.attributes['nemo.gym.sandbox.allocation.component.main.requests.cpu']).toBeUndefined();
    expect(span!.attributes['nemo.gym.sandbox.allocation.component.main.requests.unspecified']).toBe(
      'cpu,disk_gib,gpu,gpu_type,memory_mib',
    );
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining('ResourceAllocation.components[].requests.cpu = number -1 is not a finite number >= 0'),
    ]);
  });
});
