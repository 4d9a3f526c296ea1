// The writer of span attributes from typed input: Gym's exact keys, no invented 0, the same
// keys whatever the provider, and (telemetry input never throws) a typo reported once, a bad
// value dropped with one diag warning.

import { allocationAttributes, type ResourceAllocation, requestedAttributes } from '@gym/sandbox-telemetry';
import type { DiagCapture } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { captureSandboxDiag } from './support.js';

let diagnostics: DiagCapture;
beforeEach(() => {
  diagnostics = captureSandboxDiag();
});
afterEach(() => diagnostics.stop());

describe('requestedAttributes', () => {
  it('writes every known field under nemo.gym.sandbox.requested.', () => {
    expect(
      requestedAttributes({ resources: { cpu: 2, memoryMib: 4096, diskGib: 20, gpu: 1, gpuType: 'a100' } }),
    ).toEqual({
      'nemo.gym.sandbox.requested.cpu': 2,
      'nemo.gym.sandbox.requested.memory_mib': 4096,
      'nemo.gym.sandbox.requested.disk_gib': 20,
      'nemo.gym.sandbox.requested.gpu': 1,
      'nemo.gym.sandbox.requested.gpu_type': 'a100',
    });
  });

  it('keeps 0 as 0 and lists absent fields, sorted, under …unspecified', () => {
    expect(requestedAttributes({ resources: { memoryMib: 512, gpu: 0 } })).toEqual({
      'nemo.gym.sandbox.requested.memory_mib': 512,
      'nemo.gym.sandbox.requested.gpu': 0,
      'nemo.gym.sandbox.requested.unspecified': 'cpu,disk_gib,gpu_type',
    });
  });

  it('never invents 0: empty amounts give only …unspecified', () => {
    for (const resources of [{}, { cpu: undefined }]) {
      expect(requestedAttributes({ resources })).toEqual({
        'nemo.gym.sandbox.requested.unspecified': 'cpu,disk_gib,gpu,gpu_type,memory_mib',
      });
    }
  });

  it('never emits 0 or a key for an undeclared field', () => {
    const attributes = requestedAttributes({ resources: { cpu: 1 } });
    expect(Object.keys(attributes).sort()).toEqual([
      'nemo.gym.sandbox.requested.cpu',
      'nemo.gym.sandbox.requested.unspecified',
    ]);
    expect(Object.values(attributes)).not.toContain(0);
  });

  it.each([
    [{ cpu: -1 }, 'cpu', 'SandboxSpec.resources.cpu = number -1 is not a finite number >= 0'],
    [{ memoryMib: Number.NaN }, 'memory_mib', 'SandboxSpec.resources.memoryMib = number NaN is not a finite number'],
    [{ diskGib: Number.POSITIVE_INFINITY }, 'disk_gib', 'diskGib = number Infinity is not a finite number'],
    [{ gpu: '1' }, 'gpu', 'SandboxSpec.resources.gpu = string "1" is not a finite number'],
    [{ gpuType: '' }, 'gpu_type', 'gpuType = string "" is not a string of 1 to 128 characters'],
  ])(
    'a bad value %j is dropped with one warning and counts as unspecified, never thrown',
    (resources, suffix, warning) => {
      const write = () => requestedAttributes({ resources: resources as never });
      const attributes = write();
      write();
      expect(Object.keys(attributes)).toEqual(['nemo.gym.sandbox.requested.unspecified']);
      expect(attributes['nemo.gym.sandbox.requested.unspecified']).toContain(suffix);
      expect(diagnostics.lines('warn')).toEqual([expect.stringContaining(warning)]);
    },
  );

  it('a typo (memoryMB) is reported once, naming the known fields; the memory stays unspecified', () => {
    const spec = { resources: { cpu: 1, memoryMB: 512 } as never };
    const attributes = requestedAttributes(spec);
    requestedAttributes(spec);
    expect(attributes).toEqual({
      'nemo.gym.sandbox.requested.cpu': 1,
      'nemo.gym.sandbox.requested.unspecified': 'disk_gib,gpu,gpu_type,memory_mib',
    });
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining(
        'SandboxSpec.resources has no field string "memoryMB" (known: cpu, memoryMib, diskGib, gpu, gpuType); it was ignored',
      ),
    ]);
  });

  it('other fields of a spec (image, command) are not its business', () => {
    const spec = { image: 'python:3.12', command: ['sleep', '1'], resources: { cpu: 1 } };
    expect(requestedAttributes(spec)).toHaveProperty(['nemo.gym.sandbox.requested.cpu'], 1);
    expect(diagnostics.lines('warn')).toEqual([]);
  });
});

const allocation: ResourceAllocation = {
  source: 'kubernetes',
  designator: { kind: 'pod', id: 'sbx-7f9c', scope: 'gym-sandboxes' },
  host: { kind: 'node', id: 'gpu-node-12' },
  components: [
    {
      name: 'main',
      requests: { cpu: 2, memoryMib: 4096 },
      limits: { cpu: 4, memoryMib: 8192, gpu: 1, gpuType: 'a100' },
    },
    { name: 'init', requests: {}, limits: { cpu: 0 } },
  ],
};

describe('allocationAttributes', () => {
  it('writes the exact keys Gym writes', () => {
    expect(allocationAttributes(allocation)).toEqual({
      'nemo.gym.sandbox.allocation.source': 'kubernetes',
      'nemo.gym.sandbox.allocation.designator.kind': 'pod',
      'nemo.gym.sandbox.allocation.designator.id': 'sbx-7f9c',
      'nemo.gym.sandbox.allocation.designator.scope': 'gym-sandboxes',
      'nemo.gym.sandbox.allocation.host.kind': 'node',
      'nemo.gym.sandbox.allocation.host.id': 'gpu-node-12',
      'nemo.gym.sandbox.allocation.components': 'init,main',
      'nemo.gym.sandbox.allocation.component.init.requests.unspecified': 'cpu,disk_gib,gpu,gpu_type,memory_mib',
      'nemo.gym.sandbox.allocation.component.init.limits.cpu': 0,
      'nemo.gym.sandbox.allocation.component.init.limits.unspecified': 'disk_gib,gpu,gpu_type,memory_mib',
      'nemo.gym.sandbox.allocation.component.main.requests.cpu': 2,
      'nemo.gym.sandbox.allocation.component.main.requests.memory_mib': 4096,
      'nemo.gym.sandbox.allocation.component.main.requests.unspecified': 'disk_gib,gpu,gpu_type',
      'nemo.gym.sandbox.allocation.component.main.limits.cpu': 4,
      'nemo.gym.sandbox.allocation.component.main.limits.memory_mib': 8192,
      'nemo.gym.sandbox.allocation.component.main.limits.gpu': 1,
      'nemo.gym.sandbox.allocation.component.main.limits.gpu_type': 'a100',
      'nemo.gym.sandbox.allocation.component.main.limits.unspecified': 'disk_gib',
    });
  });

  it('omits designator and host when absent; an empty component list is ""', () => {
    expect(allocationAttributes({ source: 'docker', components: [] })).toEqual({
      'nemo.gym.sandbox.allocation.source': 'docker',
      'nemo.gym.sandbox.allocation.components': '',
    });
  });

  it('the same typed allocation gives the same attributes whatever the provider built it', () => {
    // Provider A writes objects literally, in one field order.
    const fromA: ResourceAllocation = allocation;
    // Provider B builds the same data from its own wire format, in another order, with
    // explicit undefined for unknown fields and components listed the other way round.
    const wire = JSON.stringify({
      containers: [
        { n: 'init', lim: { cpu: 0 } },
        { n: 'main', req: { memoryMib: 4096, cpu: 2 }, lim: { gpuType: 'a100', gpu: 1, memoryMib: 8192, cpu: 4 } },
      ],
      node: 'gpu-node-12',
      pod: { ns: 'gym-sandboxes', name: 'sbx-7f9c' },
    });
    const parsed = JSON.parse(wire);
    const fromB: ResourceAllocation = {
      host: { id: parsed.node, kind: 'node' },
      components: parsed.containers.map((c: { n: string; req?: object; lim?: object }) => ({
        limits: { diskGib: undefined, ...(c.lim ?? {}) },
        requests: c.req ?? {},
        name: c.n,
      })),
      designator: { scope: parsed.pod.ns, id: parsed.pod.name, kind: 'pod' },
      source: 'kubernetes',
    };
    const a = allocationAttributes(fromA);
    const b = allocationAttributes(fromB);
    expect(Object.keys(b)).toEqual(Object.keys(a));
    expect(b).toEqual(a);
  });

  it('every key starts with nemo.gym.sandbox. and every value is a string or a number', () => {
    for (const [key, value] of Object.entries(allocationAttributes(allocation))) {
      expect(key.startsWith('nemo.gym.sandbox.')).toBe(true);
      expect(['string', 'number']).toContain(typeof value);
    }
  });

  it('bad values are dropped one by one, each with one warning, never thrown', () => {
    const attributes = allocationAttributes({
      source: 'Kubernetes',
      designator: { kind: 'pod', id: 'https://user:secret@api.example/pods/x', scope: 'ns' },
      components: [
        { name: 'main', requests: { cpu: 1 }, limits: { cpu: -2 } },
        { name: 'Bad Name', requests: {}, limits: {} },
        { name: 'main', requests: { cpu: 9 }, limits: {} },
        { name: `a${'b'.repeat(99)}`, requests: {}, limits: {} },
      ],
    });
    expect(attributes).toEqual({
      'nemo.gym.sandbox.allocation.designator.kind': 'pod',
      'nemo.gym.sandbox.allocation.designator.scope': 'ns',
      'nemo.gym.sandbox.allocation.components': 'main',
      'nemo.gym.sandbox.allocation.component.main.requests.cpu': 1,
      'nemo.gym.sandbox.allocation.component.main.requests.unspecified': 'disk_gib,gpu,gpu_type,memory_mib',
      'nemo.gym.sandbox.allocation.component.main.limits.unspecified': 'cpu,disk_gib,gpu,gpu_type,memory_mib',
    });
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining('ResourceAllocation.source = string "Kubernetes" is not a name matching'),
      expect.stringContaining(
        'ResourceAllocation.designator.id = string "https://user:secret@api.example/pods/x" is not an identity',
      ),
      expect.stringContaining('ResourceAllocation.components[].name = string "Bad Name" is not a name matching'),
      expect.stringContaining('ResourceAllocation.components[].limits.cpu = number -2 is not a finite number >= 0'),
    ]);
  });

  it('an unknown field is reported once and ignored', () => {
    const typo = { source: 'docker', components: [], hosts: { kind: 'node', id: 'n1' } } as never;
    expect(allocationAttributes(typo)).toEqual({
      'nemo.gym.sandbox.allocation.source': 'docker',
      'nemo.gym.sandbox.allocation.components': '',
    });
    allocationAttributes(typo);
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining('ResourceAllocation has no field string "hosts"'),
    ]);
  });
});
