import { ATTR_SANDBOX_REQUEST_ID, recordRequest, SandboxInputError, type SandboxSpec } from '@gym/sandbox-telemetry';
import { createSpanHarness, type DiagCapture, type SpanHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { context, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { captureSandboxDiag, expectSandboxAttributes } from './support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const spec: SandboxSpec = { resources: { cpu: 2, memoryMib: 1024, gpu: 0 } };

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
  context.disable();
});

describe('recordRequest', () => {
  it('emits one ended gym.sandbox.request span at once, with the identity and the requested shape', () => {
    const carried = recordRequest(spec, { 'nemo.gym.sandbox.provider': 'docker' }, { tracer });
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
    const first = recordRequest(spec, { 'nemo.gym.sandbox.provider': 'docker' }, { tracer });
    const second = recordRequest(spec, { 'nemo.gym.sandbox.provider': 'docker' }, { tracer });
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
    expect(recordRequest(spec, undefined, { tracer })).toEqual({
      'nemo.gym.sandbox.request.id': expect.stringMatching(UUID),
    });
  });

  it('a request whose provisioning then fails is still counted', async () => {
    const create = async () => {
      recordRequest(spec, undefined, { tracer });
      throw new Error('no capacity');
    };
    await expect(create()).rejects.toThrow('no capacity');
    expect(t.spans('gym.sandbox.request')).toHaveLength(1);
  });

  it('is parented to options.context, else to the active context', () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const explicit = t.parent('sandbox.create');
    recordRequest(spec, undefined, { tracer, context: explicit.context });
    const active = t.parent('sandbox.create');
    context.with(active.context, () => recordRequest(spec, undefined, { tracer }));
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
    [{ 'other.key': 'x' }, 'other.key = string "x": key must start with \'nemo.gym.sandbox.\''],
    [{ 'nemo.gym.sandbox.request.id': 'mine' }, 'nemo.gym.sandbox.request.id = string "mine": key is written by'],
    [{ 'nemo.gym.sandbox.requested.cpu': 1 }, 'nemo.gym.sandbox.requested.cpu = number 1: key is written by'],
    [
      { 'nemo.gym.sandbox.tags': ['a'] },
      'nemo.gym.sandbox.tags = object (Array) ["a"]: value must be a string, a boolean or a finite number',
    ],
    [{ 'nemo.gym.sandbox.n': Number.NaN }, 'nemo.gym.sandbox.n = number NaN: value must be'],
  ])('refuses caller attributes %j', (attributes, message) => {
    expect(() => recordRequest(spec, attributes as never, { tracer })).toThrow(SandboxInputError);
    expect(() => recordRequest(spec, attributes as never, { tracer })).toThrow(message);
    expect(t.spans()).toEqual([]);
  });

  it('refuses a malformed spec, naming the field', () => {
    expect(() => recordRequest({ resources: { memoryMib: -5 } }, undefined, { tracer })).toThrow(
      'Invalid SandboxSpec: resources.memoryMib = number -5: must be a finite number ≥ 0',
    );
  });

  it('a failing tracer is logged once and never thrown', () => {
    const broken = {
      startSpan: () => {
        throw new Error('exporter exploded');
      },
    } as unknown as Tracer;
    const carried = recordRequest(spec, undefined, { tracer: broken });
    recordRequest(spec, undefined, { tracer: broken });
    expect(carried[ATTR_SANDBOX_REQUEST_ID]).toMatch(UUID);
    expect(diagnostics.lines('warn')).toEqual([expect.stringContaining('gym.sandbox.request span failed')]);
    expect(diagnostics.lines('warn')[0]).toContain('exporter exploded');
  });
});
