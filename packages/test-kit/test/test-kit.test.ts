// The kit's helpers read what a real SDK exported; these tests prove each one reports what was
// recorded, and fails loudly (naming what it saw) when asked about something that is not there.

import {
  attributeSets,
  capture,
  captureDiag,
  counterValue,
  createMetricHarness,
  createSpanHarness,
  deferred,
  findMetric,
  gaugeValue,
  histogramCount,
  histogramPoint,
  histogramTotal,
  installThrowingDiagLogger,
  ManualClock,
  pointsOf,
  resetDiag,
  sameAttributes,
  settle,
} from '@gym/test-kit';
import { afterEach, describe, expect, it } from '@jest/globals';
import { diag } from '@opentelemetry/api';

afterEach(() => resetDiag());

describe('metric harness', () => {
  it('collects histograms, gauges and counters by name, with their attributes', async () => {
    const h = createMetricHarness();
    const meter = h.meterProvider.getMeter('kit-test');
    const histogram = meter.createHistogram('kit.duration', { unit: 's' });
    histogram.record(0.5, { outcome: 'ok' });
    histogram.record(1.5, { outcome: 'ok' });
    histogram.record(3, { outcome: 'error' });
    meter.createGauge('kit.gauge').record(7);
    meter.createUpDownCounter('kit.live').add(3, { state: 'active' });

    const collected = await h.collect();
    expect([...collected.keys()].sort()).toEqual(['kit.duration', 'kit.gauge', 'kit.live']);
    expect(findMetric(collected, 'kit.duration').descriptor.unit).toBe('s');
    expect(histogramPoint(collected, 'kit.duration', { outcome: 'ok' })).toMatchObject({ count: 2, sum: 2 });
    expect(histogramCount(collected, 'kit.duration')).toBe(3);
    expect(histogramTotal(collected, 'kit.duration')).toEqual({ count: 3, sum: 5 });
    expect(histogramTotal(collected, 'kit.absent')).toEqual({ count: 0, sum: 0 });
    expect(gaugeValue(collected, 'kit.gauge')).toBe(7);
    expect(counterValue(collected, 'kit.live', { state: 'active' })).toBe(3);
    expect(attributeSets(collected, 'kit.duration')).toEqual(
      expect.arrayContaining([{ outcome: 'ok' }, { outcome: 'error' }]),
    );
    expect(pointsOf(collected, 'kit.absent')).toEqual([]);
    expect(await h.scopes()).toEqual(['kit-test']);
    await h.shutdown();
  });

  it('names what was exported when a metric, a kind or a point is missing', async () => {
    const h = createMetricHarness();
    const meter = h.meterProvider.getMeter('kit-test');
    meter.createHistogram('kit.duration').record(1, { outcome: 'ok' });
    meter.createHistogram('kit.duration').record(1, { outcome: 'error' });
    const collected = await h.collect();
    expect(() => findMetric(collected, 'kit.other')).toThrow(/kit\.other was not exported; exported: kit\.duration/);
    expect(() => gaugeValue(collected, 'kit.duration')).toThrow(/is a HISTOGRAM, not a GAUGE/);
    expect(() => histogramPoint(collected, 'kit.duration')).toThrow(/has 2 points, expected 1/);
    expect(() => histogramPoint(collected, 'kit.duration', { outcome: 'x' })).toThrow(/no point with attributes/);
    await h.shutdown();
  });

  it('compares attribute sets exactly', () => {
    expect(sameAttributes({ a: 1, b: 'x' }, { b: 'x', a: 1 })).toBe(true);
    expect(sameAttributes({ a: 1 }, { a: 1, b: 'x' })).toBe(false);
    expect(sameAttributes({ a: 1 }, { a: '1' })).toBe(false);
  });
});

describe('span harness', () => {
  it('returns finished spans by name, parented, and forgets them on reset', async () => {
    const h = createSpanHarness();
    const { span: parent, context } = h.parent('outer');
    h.tracer.startSpan('inner', { attributes: { k: 'v' } }, context).end();
    parent.end();
    expect(h.spans().map((s) => s.name)).toEqual(['inner', 'outer']);
    const [inner] = h.spans('inner');
    expect(inner?.attributes).toEqual({ k: 'v' });
    expect(inner?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    h.reset();
    expect(h.spans()).toEqual([]);
    await h.shutdown();
  });
});

describe('diag capture', () => {
  it('keeps every message with its level and arguments', () => {
    const logs = captureDiag();
    diag.warn('@gym/x: first', 1);
    diag.error('@gym/y: second');
    diag.debug('@gym/x: third');
    expect(logs.from('@gym/x:').map((m) => m.message)).toEqual(['@gym/x: first', '@gym/x: third']);
    expect(logs.atLeast('warn').map((m) => m.level)).toEqual(['warn', 'error']);
    expect(logs.lines('warn')).toEqual(['@gym/x: first 1', '@gym/y: second']);
    logs.clear();
    expect(logs.messages).toEqual([]);
    logs.stop();
    diag.warn('after stop');
    expect(logs.messages).toEqual([]);
  });

  it('a throwing logger throws through diag (what telemetry must survive)', () => {
    const logger = installThrowingDiagLogger(new Error('boom'));
    expect(() => diag.warn('x')).toThrow('boom');
    expect(logger.calls).toBe(1);
    logger.stop();
    expect(() => diag.warn('after stop')).not.toThrow();
    expect(logger.calls).toBe(1);
  });
});

describe('manual clock', () => {
  it('moves only by hand and counts reads', () => {
    const clock = new ManualClock(100);
    expect(clock.reads).toBe(0);
    clock.advance(25);
    const read = clock.now;
    expect(read()).toBe(125);
    expect(clock.reads).toBe(1);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance(Number.NaN)).toThrow(/finite ms >= 0, got NaN/);
  });
});

describe('deferred, settle, capture', () => {
  it('resolves when told, and captures rejections without leaving them unhandled', async () => {
    const d = deferred<number>();
    let seen: number | undefined;
    void d.promise.then((v) => {
      seen = v;
    });
    await settle();
    expect(seen).toBeUndefined();
    d.resolve(4);
    await settle();
    expect(seen).toBe(4);

    const failing = deferred();
    const outcome = capture(failing.promise);
    failing.reject(new Error('no'));
    expect(await outcome).toEqual({ ok: false, error: new Error('no') });
    expect(await capture(Promise.resolve('y'))).toEqual({ ok: true, value: 'y' });
  });
});
