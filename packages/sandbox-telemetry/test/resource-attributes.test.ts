import {
  allocationAttributes,
  amountAttributes,
  type ResourceAllocation,
  requestedAttributes,
  SandboxInputError,
} from '@gym/sandbox-telemetry';
import { describe, expect, it } from '@jest/globals';

describe('amountAttributes', () => {
  it('writes every known field under the prefix and nothing for unknown ones', () => {
    expect(
      amountAttributes({ cpu: 2, memoryMib: 4096, diskGib: 20, gpu: 1, gpuType: 'a100' }, 'nemo.gym.sandbox.x.'),
    ).toEqual({
      'nemo.gym.sandbox.x.cpu': 2,
      'nemo.gym.sandbox.x.memory_mib': 4096,
      'nemo.gym.sandbox.x.disk_gib': 20,
      'nemo.gym.sandbox.x.gpu': 1,
      'nemo.gym.sandbox.x.gpu_type': 'a100',
    });
  });

  it('keeps 0 as 0 and lists absent fields, sorted, under …unspecified', () => {
    expect(amountAttributes({ gpu: 0, cpu: 0.5 }, 'nemo.gym.sandbox.x.')).toEqual({
      'nemo.gym.sandbox.x.cpu': 0.5,
      'nemo.gym.sandbox.x.gpu': 0,
      'nemo.gym.sandbox.x.unspecified': 'disk_gib,gpu_type,memory_mib',
    });
  });

  it('never invents 0: empty amounts give only …unspecified', () => {
    expect(amountAttributes({}, 'nemo.gym.sandbox.x.')).toEqual({
      'nemo.gym.sandbox.x.unspecified': 'cpu,disk_gib,gpu,gpu_type,memory_mib',
    });
    expect(amountAttributes({ cpu: undefined }, 'nemo.gym.sandbox.x.')).toEqual({
      'nemo.gym.sandbox.x.unspecified': 'cpu,disk_gib,gpu,gpu_type,memory_mib',
    });
  });

  it.each(['nemo.gym.other.', 'nemo.gym.sandbox.x', 'requested.', 42])('refuses the prefix %p', (prefix) => {
    expect(() => amountAttributes({}, prefix as string)).toThrow(SandboxInputError);
    expect(() => amountAttributes({}, prefix as string)).toThrow(/prefix = .*must start with 'nemo\.gym\.sandbox\.'/);
  });

  it('validates the amounts', () => {
    expect(() => amountAttributes({ cpu: -1 }, 'nemo.gym.sandbox.x.')).toThrow(
      'cpu = number -1: must be a finite number ≥ 0',
    );
  });
});

describe('requestedAttributes', () => {
  it('is amountAttributes(spec.resources, nemo.gym.sandbox.requested.)', () => {
    expect(requestedAttributes({ resources: { memoryMib: 512, gpu: 0 } })).toEqual({
      'nemo.gym.sandbox.requested.memory_mib': 512,
      'nemo.gym.sandbox.requested.gpu': 0,
      'nemo.gym.sandbox.requested.unspecified': 'cpu,disk_gib,gpu_type',
    });
  });

  it('never emits 0 or a key for an undeclared field', () => {
    const attributes = requestedAttributes({ resources: { cpu: 1 } });
    expect(Object.keys(attributes).sort()).toEqual([
      'nemo.gym.sandbox.requested.cpu',
      'nemo.gym.sandbox.requested.unspecified',
    ]);
    expect(Object.values(attributes)).not.toContain(0);
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

  it('validates first', () => {
    expect(() => allocationAttributes({ source: 'docker', components: [{ name: 'a b' }] } as never)).toThrow(
      /components\[0\]\.name = string "a b": must match/,
    );
  });
});
