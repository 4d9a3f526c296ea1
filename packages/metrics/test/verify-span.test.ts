// Gym's `gym.verify` span from traceVerify, under a real SDK: its name and server-name attribute,
// the active span of the call, ended at the call's settlement, a failure recorded with its
// status and passed on unchanged; a lazy thenable's work runs once, as without the span; no span
// and the call as it is when off; a server name that is not one throws at once, on or off.

import { ATTR_SERVER_NAME, SPAN_VERIFY, type SpanGroup } from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { traceVerify } from '@gym/metrics';
import { createSpanHarness, type SpanHarness } from '@gym/test-kit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';

let h: SpanHarness;

function groups(...spanGroups: SpanGroup[]): void {
  setTelemetryState({ metricsExporting: false, tracesExporting: true, spanGroups, orchestrator: false });
}

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(() => {
  h = createSpanHarness();
  groups('verify');
});
afterEach(async () => {
  setTelemetryState(undefined);
  trace.disable();
  await h.shutdown();
});

describe('traceVerify', () => {
  it('opens gym.verify with the server name around the call, as its active span, ended when it settles', async () => {
    let finish!: (value: string) => void;
    let inner: string | undefined;
    const pending = traceVerify(
      () => {
        inner = trace.getActiveSpan()?.spanContext().spanId;
        return new Promise<string>((resolve) => (finish = resolve));
      },
      { serverName: 'math_verifier', tracerProvider: h.tracerProvider },
    );
    expect(h.spans()).toHaveLength(0);
    finish('verified');
    expect(await pending).toBe('verified');
    const [span] = h.spans(SPAN_VERIFY);
    expect(span?.attributes).toEqual({ [ATTR_SERVER_NAME]: 'math_verifier' });
    expect(span?.spanContext().spanId).toBe(inner);
    expect(span?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('records a throw or a rejection on the span and passes it on unchanged', async () => {
    const wrong = new Error('the verifier crashed');
    expect(() =>
      traceVerify(
        () => {
          throw wrong;
        },
        { tracerProvider: h.tracerProvider },
      ),
    ).toThrow(wrong);
    await expect(traceVerify(() => Promise.reject(wrong), { tracerProvider: h.tracerProvider })).rejects.toBe(wrong);
    const spans = h.spans(SPAN_VERIFY);
    expect(spans).toHaveLength(2);
    for (const span of spans) {
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the verifier crashed' });
      expect(span.events.map((event) => event.name)).toEqual(['exception']);
      expect(span.attributes).toEqual({});
    }
  });

  it('starts a lazy thenable (work that starts in `then`) once, and ends the span at its settlement', async () => {
    const lazy = (outcome: 'verified' | 'failed') => ({
      starts: 0,
      kind: 'query',
      // biome-ignore lint/suspicious/noThenProperty: a lazy thenable is what is under test
      then(onFulfilled?: (value: string) => unknown, onRejected?: (error: unknown) => unknown) {
        this.starts++;
        const work = outcome === 'verified' ? Promise.resolve(outcome) : Promise.reject(new Error(outcome));
        return work.then(onFulfilled, onRejected);
      },
    });
    const passes = lazy('verified');
    const traced = traceVerify(() => passes, { tracerProvider: h.tracerProvider });
    expect(traced.kind).toBe('query');
    expect(await traced).toBe('verified');
    const fails = lazy('failed');
    await expect(traceVerify(() => fails, { tracerProvider: h.tracerProvider })).rejects.toThrow('failed');
    expect([passes.starts, fails.starts]).toEqual([1, 1]);
    expect(h.spans(SPAN_VERIFY).map((span) => span.status)).toEqual([
      { code: SpanStatusCode.UNSET },
      { code: SpanStatusCode.ERROR, message: 'failed' },
    ]);
  });

  it('uses the global provider only while traces export and the verify group is on', () => {
    trace.setGlobalTracerProvider(h.tracerProvider);
    groups('server');
    const value = { same: true };
    expect(traceVerify(() => value)).toBe(value);
    expect(h.spans()).toHaveLength(0);
    groups('verify');
    traceVerify(() => value);
    expect(h.spans(SPAN_VERIFY)).toHaveLength(1);
  });

  it('throws a RangeError at once for a server name that is not one, on or off', () => {
    let ran = false;
    const run = () => {
      ran = true;
    };
    expect(() => traceVerify(run, { serverName: 'bad name', tracerProvider: h.tracerProvider })).toThrow(RangeError);
    groups();
    expect(() => traceVerify(run, { serverName: '' })).toThrow(RangeError);
    expect(ran).toBe(false);
  });
});
