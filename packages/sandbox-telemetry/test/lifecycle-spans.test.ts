// Gym 0.7.0's sandbox lifecycle spans from SandboxLifecycle, under a real SDK: `gym.sandbox.start`
// around a create (with the sandbox id the caller names), `gym.sandbox.exec` around an exec,
// `gym.sandbox.stop` around a close, each with `nemo.gym.sandbox.provider`, each the active span
// of what it wraps, ended when that settles, an error recorded with its status. Off (no
// tracer provider and no exporting traces, or the `sandbox` group off): no span, and what the
// caller passed runs as it is.

import {
  ATTR_SANDBOX_ID,
  ATTR_SANDBOX_PROVIDER,
  SPAN_SANDBOX_EXEC,
  SPAN_SANDBOX_START,
  SPAN_SANDBOX_STOP,
} from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { SandboxLifecycle } from '@gym/sandbox-telemetry';
import { createSpanHarness, type SpanHarness } from '@gym/test-kit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';

let h: SpanHarness;
const manager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(manager.enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(() => {
  h = createSpanHarness();
  setTelemetryState({ metricsExporting: false, tracesExporting: true, spanGroups: ['sandbox'], orchestrator: false });
});
afterEach(async () => {
  setTelemetryState(undefined);
  await h.shutdown();
});

function lifecycle(owned = true): SandboxLifecycle {
  return new SandboxLifecycle({ provider: 'docker', owned, tracerProvider: h.tracerProvider });
}

describe("Gym's sandbox lifecycle spans", () => {
  it('spans a create, an exec and a close, each with the provider and the id the create named', async () => {
    const sandbox = lifecycle();
    const handle = await sandbox.create(
      async () => ({ id: 'sbx-1', parent: trace.getActiveSpan() }),
      (created) => created.id,
    );
    expect(await sandbox.exec(async () => 'ran')).toBe('ran');
    expect(sandbox.release(() => 'closed')).toBe('closed');

    const [start] = h.spans(SPAN_SANDBOX_START);
    const [exec] = h.spans(SPAN_SANDBOX_EXEC);
    const [stop] = h.spans(SPAN_SANDBOX_STOP);
    expect(start?.attributes).toEqual({ [ATTR_SANDBOX_PROVIDER]: 'docker', [ATTR_SANDBOX_ID]: 'sbx-1' });
    expect(exec?.attributes).toEqual({ [ATTR_SANDBOX_PROVIDER]: 'docker', [ATTR_SANDBOX_ID]: 'sbx-1' });
    expect(stop?.attributes).toEqual({ [ATTR_SANDBOX_PROVIDER]: 'docker', [ATTR_SANDBOX_ID]: 'sbx-1' });
    // The create ran inside its span: what the provider starts there is the span's child.
    expect(handle.parent?.spanContext().spanId).toBe(start?.spanContext().spanId);
    expect(h.spans().map((span) => span.status.code)).toEqual([
      SpanStatusCode.UNSET,
      SpanStatusCode.UNSET,
      SpanStatusCode.UNSET,
    ]);
  });

  it('ends a span when what it wraps settles, not when it returns', async () => {
    const sandbox = lifecycle();
    let finish!: () => void;
    const pending = sandbox.create(() => new Promise<void>((resolve) => (finish = resolve)));
    expect(h.spans(SPAN_SANDBOX_START)).toHaveLength(0);
    finish();
    await pending;
    expect(h.spans(SPAN_SANDBOX_START)).toHaveLength(1);
  });

  it('records a failed create or exec as an error on its span, and passes the error on unchanged', async () => {
    const sandbox = lifecycle();
    const busy = new Error('the provider is busy');
    await expect(sandbox.create(() => Promise.reject(busy))).rejects.toBe(busy);
    expect(() =>
      sandbox.exec(() => {
        throw busy;
      }),
    ).toThrow(busy);
    for (const span of [...h.spans(SPAN_SANDBOX_START), ...h.spans(SPAN_SANDBOX_EXEC)]) {
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the provider is busy' });
      expect(span.events.map((event) => event.name)).toEqual(['exception']);
      expect(span.attributes[ATTR_SANDBOX_ID]).toBeUndefined();
    }
    expect(h.spans(SPAN_SANDBOX_START)).toHaveLength(1);
    expect(h.spans(SPAN_SANDBOX_EXEC)).toHaveLength(1);
  });

  it('opens no stop span for a release without a close, nor for a borrowed sandbox', () => {
    lifecycle().release();
    const borrowed = lifecycle(false);
    borrowed.create(() => 'handle');
    borrowed.release(() => 'closed');
    expect(h.spans().map((span) => span.name)).toEqual([]);
  });

  it('opens no span with the sandbox group off and no tracer provider given', async () => {
    setTelemetryState({ metricsExporting: false, tracesExporting: true, spanGroups: ['server'], orchestrator: false });
    const global = h.tracerProvider;
    trace.setGlobalTracerProvider(global);
    try {
      const sandbox = new SandboxLifecycle({ provider: 'docker' });
      await sandbox.create(async () => 'handle');
      await sandbox.exec(async () => 'ran');
      sandbox.release(() => 'closed');
      expect(h.spans()).toHaveLength(0);
      // The same calls with the group on, through the global provider, do open them.
      setTelemetryState({
        metricsExporting: false,
        tracesExporting: true,
        spanGroups: ['sandbox'],
        orchestrator: false,
      });
      const on = new SandboxLifecycle({ provider: 'docker' });
      await on.create(async () => 'handle');
      expect(h.spans(SPAN_SANDBOX_START)).toHaveLength(1);
    } finally {
      trace.disable();
    }
  });
});
