import {
  checkSandboxHandle,
  parseResourceAllocation,
  parseSandboxResourceAmounts,
  parseSandboxSpec,
  type ResourceAllocation,
  resourceAllocationSchema,
  SandboxInputError,
  sandboxResourceAmountsSchema,
} from '@gym/sandbox-telemetry';
import { describe, expect, it } from '@jest/globals';
import { ROOT_CONTEXT } from '@opentelemetry/api';

function errorOf(fn: () => unknown): SandboxInputError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SandboxInputError);
    expect(error).toBeInstanceOf(TypeError);
    return error as SandboxInputError;
  }
  throw new Error('expected a SandboxInputError, nothing was thrown');
}

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
    { name: 'sidecar.proxy', requests: {}, limits: {} },
  ],
};

describe('schemas accept well-formed input', () => {
  it('amounts: every field optional, 0 allowed', () => {
    expect(parseSandboxResourceAmounts({})).toEqual({});
    expect(parseSandboxResourceAmounts({ cpu: 0, memoryMib: 0, diskGib: 0, gpu: 0, gpuType: 'h100' })).toEqual({
      cpu: 0,
      memoryMib: 0,
      diskGib: 0,
      gpu: 0,
      gpuType: 'h100',
    });
    expect(sandboxResourceAmountsSchema.safeParse({ cpu: 0.5 }).success).toBe(true);
  });

  it('an allocation round-trips unchanged', () => {
    expect(parseResourceAllocation(allocation)).toEqual(allocation);
    expect(resourceAllocationSchema.safeParse({ source: 'docker', components: [] }).success).toBe(true);
  });

  it('a spec keeps its other fields; a handle is returned as the same object', () => {
    const spec = { resources: { cpu: 1 }, image: 'python:3.12' };
    expect(parseSandboxSpec(spec)).toEqual(spec);
    const handle = { id: 'sbx-1', owned: true, context: ROOT_CONTEXT, pid: 42 };
    expect(checkSandboxHandle(handle)).toBe(handle);
  });
});

describe('bad input fails with the field path, the value and the rule', () => {
  it.each([
    [{ cpu: -1 }, 'cpu = number -1: must be a finite number ≥ 0'],
    [{ memoryMib: Number.NaN }, 'memoryMib = number NaN: must be a finite number ≥ 0'],
    [{ diskGib: Number.POSITIVE_INFINITY }, 'diskGib = number Infinity: must be a finite number ≥ 0'],
    [{ gpu: '1' }, 'gpu = string "1": must be a finite number ≥ 0'],
    [{ gpuType: '' }, 'gpuType = string "": must be a string of 1 to 128 characters'],
    [{ memoryMB: 512 }, 'memoryMB = number 512: unknown field (allowed: cpu, memoryMib, diskGib, gpu, gpuType)'],
    [null, '(root) = null: must be an object'],
  ])('amounts %j', (input, message) => {
    expect(errorOf(() => parseSandboxResourceAmounts(input)).message).toBe(
      `Invalid SandboxResourceAmounts: ${message}`,
    );
  });

  it('names nested paths inside an allocation, every problem at once', () => {
    const error = errorOf(() =>
      parseResourceAllocation({
        source: 'Kubernetes',
        designator: { kind: 'pod', id: 'https://user:secret@api.example/pods/x' },
        components: [
          { name: 'main', requests: { cpu: 1 }, limits: { cpu: -2 } },
          { name: 'Bad Name', requests: {}, limits: {} },
        ],
      }),
    );
    expect(error.problems.map((problem) => problem.path)).toEqual([
      'source',
      'components[0].limits.cpu',
      'components[1].name',
      'designator.id',
    ]);
    expect(error.message).toContain('source = string "Kubernetes": must match /^[a-z0-9][a-z0-9_.-]{0,62}$/');
    expect(error.message).toContain('components[0].limits.cpu = number -2: must be a finite number ≥ 0');
    expect(error.message).toContain('components[1].name = string "Bad Name": must match');
    expect(error.message).toContain(
      'designator.id = string "https://user:secret@api.example/pods/x": must be an opaque identity',
    );
  });

  it('refuses duplicate component names (they would collide as keys)', () => {
    const error = errorOf(() =>
      parseResourceAllocation({
        source: 'docker',
        components: [
          { name: 'main', requests: {}, limits: {} },
          { name: 'main', requests: {}, limits: {} },
        ],
      }),
    );
    expect(error.message).toBe(
      'Invalid ResourceAllocation: components[1].name = string "main": must be unique (components[0] has the same name)',
    );
  });

  it('refuses component names that would make keys unbounded', () => {
    const long = `a${'b'.repeat(99)}`;
    const error = errorOf(() =>
      parseResourceAllocation({ source: 'docker', components: [{ name: long, requests: {}, limits: {} }] }),
    );
    expect(error.problems).toEqual([
      { path: 'components[0].name', value: long, rule: expect.stringContaining('must match') },
    ]);
    expect(error.message).toContain('…" (100 chars)'); // the value is shortened in the message, kept whole in `problems`
  });

  it('names missing required fields', () => {
    const error = errorOf(() => parseResourceAllocation({ components: [{ name: 'main', limits: {} }] }));
    expect(error.message).toBe(
      'Invalid ResourceAllocation: source = undefined: must be a string matching /^[a-z0-9][a-z0-9_.-]{0,62}$/; ' +
        'components[0].requests = undefined: must be an object',
    );
  });

  it('checks handles', () => {
    expect(errorOf(() => checkSandboxHandle({ id: '', owned: 'yes' } as never)).message).toBe(
      'Invalid SandboxHandle: id = string "": must be a non-empty string; owned = string "yes": must be a boolean (false for a borrowed handle)',
    );
    expect(errorOf(() => checkSandboxHandle({ id: 'x', owned: true, context: {} } as never)).message).toBe(
      'Invalid SandboxHandle: context = object (Object) {}: must be an OpenTelemetry Context',
    );
  });

  it('a spec without resources', () => {
    expect(errorOf(() => parseSandboxSpec({ image: 'x' })).message).toBe(
      'Invalid SandboxSpec: resources = undefined: must be an object',
    );
  });
});
