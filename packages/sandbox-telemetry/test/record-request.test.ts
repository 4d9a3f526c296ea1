import { ATTR_SANDBOX_REQUEST_ID } from '@gym/constants';
import { recordRequest, type SandboxSpec } from '@gym/sandbox-telemetry';
import { createSpanHarness, type DiagCapture, type SpanHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { context, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { captureSandboxDiag, expectSandboxAttributes, providerOf } from './support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const spec: SandboxSpec = { resources: { cpu: 2, memoryMib: 1024, gpu: 0 } };

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
  context.disable();
});

describe('recordRequest', () => {
  it('emits one ended gym.sandbox.request span at once, with the identity and the requested shape', () => {
    const carried = recordRequest(spec, { 'nemo.gym.sandbox.provider': 'docker' }, { tracerProvider });
    // No await in between: the record exists before provisioning even starts.
    const spans = t.spans();
    expect(spans.map((span) => span.name)).toEqual(['gym.sandbox.request']);
    expect(spans[0]!.ended).toBe(true);
    expect(spans[0]!.attributes).toEqual({
      'nemo.gym.sandbox.provider': 'docker',
      'nemo.gym.sandbox.request.id': carried[ATTR_SANDBOX_REQUEST_ID],
      'nemo.gym.sandbox.requested.cpu': 2,
      'nemo.gym.sandbox.requested.memory_mib': 1024,
      'nemo.gym.sandbox.requested.gpu': 0,
      'nemo.gym.sandbox.requested.unspecified': 'disk_gib,gpu_type',
    });
    expectSandboxAttributes(spans[0]!);
  });

  it('returns the carried attributes: the caller’s plus a new UUID per call, frozen', () => {
    const first = recordRequest(spec, { 'nemo.gym.sandbox.provider': 'docker' }, { tracerProvider });
    const second = recordRequest(spec, { 'nemo.gym.sandbox.provider': 'docker' }, { tracerProvider });
    expect(first).toEqual({
      'nemo.gym.sandbox.provider': 'docker',
      'nemo.gym.sandbox.request.id': expect.stringMatching(UUID),
    });
    expect(second[ATTR_SANDBOX_REQUEST_ID]).toMatch(UUID);
    expect(second[ATTR_SANDBOX_REQUEST_ID]).not.toBe(first[ATTR_SANDBOX_REQUEST_ID]);
    expect(Object.isFrozen(first)).toBe(true);
    expect(t.spans('gym.sandbox.request').map((span) => span.attributes[ATTR_SANDBOX_REQUEST_ID])).toEqual([
      first[ATTR_SANDBOX_REQUEST_ID],
      second[ATTR_SANDBOX_REQUEST_ID],
    ]);
    expect(recordRequest(spec, undefined, { tracerProvider })).toEqual({
      'nemo.gym.sandbox.request.id': expect.stringMatching(UUID),
    });
  });

  it('a request whose provisioning then fails is still counted', async () => {
    const create = async () => {
      recordRequest(spec, undefined, { tracerProvider });
      throw new Error('no capacity');
    };
    await expect(create()).rejects.toThrow('no capacity');
    expect(t.spans('gym.sandbox.request')).toHaveLength(1);
  });

  it('is parented to options.context, else to the active context', () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const explicit = t.parent('sandbox.create');
    recordRequest(spec, undefined, { tracerProvider, context: explicit.context });
    const active = t.parent('sandbox.create');
    context.with(active.context, () => recordRequest(spec, undefined, { tracerProvider }));
    const [a, b] = t.spans('gym.sandbox.request');
    expect(a!.parentSpanContext?.spanId).toBe(explicit.span.spanContext().spanId);
    expect(b!.parentSpanContext?.spanId).toBe(active.span.spanContext().spanId);
    expect(b!.spanContext().traceId).toBe(active.span.spanContext().traceId);
  });

  it('takes the tracer from an injected provider', () => {
    recordRequest(spec, undefined, { tracerProvider: t.tracerProvider });
    const [span] = t.spans('gym.sandbox.request');
    expect(span!.instrumentationScope.name).toBe('@gym/sandbox-telemetry');
  });

  it.each([
    [{ 'other.key': 'x' }, 'key string "other.key" is not one a caller may set'],
    [{ 'nemo.gym.sandbox.request.id': 'mine' }, 'key string "nemo.gym.sandbox.request.id" is not one a caller may set'],
    [
      { 'nemo.gym.sandbox.requested.cpu': 1 },
      'key string "nemo.gym.sandbox.requested.cpu" is not one a caller may set',
    ],
    [
      { 'nemo.gym.sandbox.tags': ['a'] },
      'nemo.gym.sandbox.tags = object (Array) ["a"] is not a string, a boolean or a finite number',
    ],
    [
      { 'nemo.gym.sandbox.n': Number.NaN },
      'nemo.gym.sandbox.n = number NaN is not a string, a boolean or a finite number',
    ],
  ])('leaves out caller attributes %j with one warning; the record is still written', (attributes, message) => {
    const carried = recordRequest(
      spec,
      { ...(attributes as object), 'nemo.gym.sandbox.provider': 'docker' },
      { tracerProvider },
    );
    recordRequest(spec, attributes as never, { tracerProvider });
    expect(Object.keys(carried).sort()).toEqual(['nemo.gym.sandbox.provider', 'nemo.gym.sandbox.request.id']);
    expect(carried[ATTR_SANDBOX_REQUEST_ID]).toMatch(UUID);
    const spans = t.spans('gym.sandbox.request');
    expect(spans).toHaveLength(2);
    for (const span of spans) for (const key of Object.keys(attributes)) expect(span.attributes[key]).not.toBe('mine');
    expect(spans[0]!.attributes['nemo.gym.sandbox.provider']).toBe('docker');
    expect(diagnostics.lines('warn')).toEqual([expect.stringContaining(message)]);
  });

  it('a bad amount in the spec is dropped with one warning, never thrown', () => {
    recordRequest({ resources: { memoryMib: -5 } }, undefined, { tracerProvider });
    const [span] = t.spans('gym.sandbox.request');
    expect(span!.attributes['nemo.gym.sandbox.requested.memory_mib']).toBeUndefined();
    expect(span!.attributes['nemo.gym.sandbox.requested.unspecified']).toBe('cpu,disk_gib,gpu,gpu_type,memory_mib');
    expect(diagnostics.lines('warn')).toEqual([
      expect.stringContaining('SandboxSpec.resources.memoryMib = number -5 is not a finite number >= 0'),
    ]);
  });

  it('a failing tracer is logged once and never thrown', () => {
    const broken = {
      startSpan: () => {
        throw new Error('exporter exploded');
      },
    } as unknown as Tracer;
    const carried = recordRequest(spec, undefined, { tracerProvider: providerOf(broken) });
    recordRequest(spec, undefined, { tracerProvider: providerOf(broken) });
    expect(carried[ATTR_SANDBOX_REQUEST_ID]).toMatch(UUID);
    expect(diagnostics.lines('warn')).toEqual([expect.stringContaining('gym.sandbox.request span failed')]);
    expect(diagnostics.lines('warn')[0]).toContain('exporter exploded');
  });
});
