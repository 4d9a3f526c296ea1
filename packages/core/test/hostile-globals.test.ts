// What a hostile process can put in the globals core reads, and what a hostile caller can
// pass: a foreign value of the wrong shape in a slot, a Proxy whose traps throw, a polluted
// Object.prototype, a huge array. Core never throws for them and never misreads them.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SPAN_GROUP_PRESETS } from '@gym/constants';
import {
  createReporter,
  currentSpanGroups,
  describeValue,
  getTelemetryState,
  isMetricsExporting,
  isTracesExporting,
  resolveMeter,
  resolveTracer,
  setTelemetryState,
  wouldRecordMetrics,
  wouldRecordTraces,
} from '@gym/core';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { packageFile } from './support/paths.js';

const STATE_KEY = Symbol.for('@gym/telemetry-state.v1');
const OTEL_KEY = Symbol.for('opentelemetry.js.api.1');
const holder = globalThis as unknown as Record<symbol, unknown>;

function occupy(key: symbol, value: unknown): void {
  Object.defineProperty(globalThis, key, { value, configurable: true, writable: true, enumerable: false });
}

// Armed only inside a test: jest itself walks globals between tests.
let armed = false;
const trap = (): never => {
  throw new Error('trap');
};
const throwingProxy = (): object =>
  new Proxy(
    {},
    {
      get: (target, key) => (armed ? trap() : Reflect.get(target, key)),
      getOwnPropertyDescriptor: (target, key) => (armed ? trap() : Reflect.getOwnPropertyDescriptor(target, key)),
      has: (target, key) => (armed ? trap() : Reflect.has(target, key)),
    },
  );

beforeEach(() => {
  armed = true;
});

afterEach(() => {
  armed = false;
  delete holder[STATE_KEY];
  delete holder[OTEL_KEY];
});

describe('a foreign value in the telemetry-state slot', () => {
  it.each([
    ['a number', () => 42],
    ['a string', () => 'on'],
    ['an empty frozen object', () => Object.freeze({})],
    [
      'a newer major version',
      () => Object.freeze({ version: 2, metricsExporting: true, spanGroups: new Set(['job']) }),
    ],
    [
      'a version-1 object with strings for booleans',
      () => ({ version: 1, metricsExporting: 'yes', spanGroups: 'job' }),
    ],
    ['a Proxy whose traps throw', throwingProxy],
  ])('%s is ignored: booleans stay booleans, span groups stay a set', (_what, make) => {
    occupy(STATE_KEY, make());
    expect(() => getTelemetryState()).not.toThrow();
    expect(isMetricsExporting()).toBe(false);
    expect(isTracesExporting()).toBe(false);
    const groups = currentSpanGroups();
    expect(groups).toBeInstanceOf(Set);
    expect([...groups].sort()).toEqual([...SPAN_GROUP_PRESETS.default].sort());
    expect(wouldRecordMetrics(undefined)).toBe(false);
    expect(resolveMeter(undefined, { name: '@gym/t' }, createReporter('@gym/test-foreign'))).toBeUndefined();
  });

  it('reads a well-formed state written by another copy (a frozen plain object) as is', () => {
    const written = Object.freeze({
      version: 1,
      metricsExporting: true,
      tracesExporting: false,
      spanGroups: new Set(['sandbox']),
      orchestrator: false,
      sandboxSampleIntervalSeconds: 0,
    });
    occupy(STATE_KEY, written);
    expect(getTelemetryState()).toBe(written);
    expect(isMetricsExporting()).toBe(true);
    expect([...currentSpanGroups()]).toEqual(['sandbox']);
  });

  it('reads a hand-written, unfrozen version-1 state field by field, and follows later changes', () => {
    const written = { version: 1, metricsExporting: true, tracesExporting: true, spanGroups: ['job'], orchestrator: 0 };
    occupy(STATE_KEY, written);
    expect(getTelemetryState()).toMatchObject({ metricsExporting: true, tracesExporting: true, orchestrator: false });
    expect([...currentSpanGroups()]).toEqual(['job']);
    written.metricsExporting = false;
    expect(isMetricsExporting()).toBe(false);
  });

  it('setTelemetryState replaces a foreign value and readers see the new state', () => {
    occupy(STATE_KEY, 42);
    expect(isMetricsExporting()).toBe(false);
    setTelemetryState({ metricsExporting: true, tracesExporting: false, spanGroups: ['job'], orchestrator: false });
    expect(isMetricsExporting()).toBe(true);
  });

  it('setTelemetryState refuses a non-object init naming the value', () => {
    expect(() => setTelemetryState(42 as never)).toThrow(RangeError);
    expect(() => setTelemetryState(null as never)).toThrow(/setTelemetryState.*null/);
    expect(() =>
      setTelemetryState({ metricsExporting: true, tracesExporting: true, spanGroups: 5 as never, orchestrator: false }),
    ).toThrow(/spanGroups.*number 5/);
  });
});

describe('a hostile OpenTelemetry API global', () => {
  it('a Proxy whose traps throw means "not exporting", never a throw', () => {
    occupy(OTEL_KEY, throwingProxy());
    expect(isMetricsExporting()).toBe(false);
    expect(isTracesExporting()).toBe(false);
    expect(resolveMeter(undefined, { name: '@gym/t' }, createReporter('@gym/test-otel-proxy'))).toBeUndefined();
    expect(resolveTracer(undefined, { name: '@gym/t' }, createReporter('@gym/test-otel-proxy'))).toBeUndefined();
  });
});

describe('a polluted Object.prototype', () => {
  it('never injects a meter, provider, tracer or tracer provider', () => {
    const proto = Object.prototype as Record<string, unknown>;
    const provider = new MeterProvider();
    proto.meter = provider.getMeter('polluted');
    proto.meterProvider = provider;
    proto.tracer = { startSpan() {} };
    proto.tracerProvider = { getTracer: () => ({}) };
    try {
      const reporter = createReporter('@gym/test-polluted');
      expect(wouldRecordMetrics({})).toBe(false);
      expect(wouldRecordTraces({})).toBe(false);
      expect(resolveMeter({}, { name: '@gym/t' }, reporter)).toBeUndefined();
      expect(resolveTracer({}, { name: '@gym/t' }, reporter)).toBeUndefined();
      // Own properties still inject.
      const own = provider.getMeter('own');
      expect(resolveMeter({ meter: own }, { name: '@gym/t' }, reporter)).toBe(own);
    } finally {
      delete proto.meter;
      delete proto.meterProvider;
      delete proto.tracer;
      delete proto.tracerProvider;
    }
  });
});

describe('describeValue on huge values', () => {
  it('renders a 1e6-element array and a 1e5-key object from their first entries only', () => {
    const array = new Array(1_000_000).fill('x'.repeat(300));
    const text = describeValue(array);
    expect(text.length).toBeLessThan(120);
    expect(text.startsWith('object (Array) ["xxx')).toBe(true);
    const many: Record<string, number> = {};
    for (let i = 0; i < 100_000; i += 1) many[`k${i}`] = i;
    expect(describeValue(new Uint8Array(1_000_000))).toMatch(/^object \(Uint8Array\) \{"0":0,"1":0,.*"…":"…"\}$/);
    expect(describeValue(many)).toMatch(/^object \(Object\) \{"k0":0,"k1":1,.*"…":"…"\}$/);
    // Only a bounded part of the value is ever visited: a getter far in never runs.
    const long: unknown[] = new Array(1000).fill(0);
    let visited = false;
    Object.defineProperty(long, 999, {
      get() {
        visited = true;
        return 1;
      },
      enumerable: true,
    });
    describeValue(long);
    expect(visited).toBe(false);
  });

  it('keeps the short renderings of small values', () => {
    expect(describeValue([1, 2, 3])).toBe('object (Array) [1,2,3]');
    expect(describeValue({ a: 'b' })).toBe('object (Object) {"a":"b"}');
    expect(describeValue(new String('verify'))).toBe('object (String) "verify"');
    expect(describeValue({ toJSON: () => 'x' })).toBe('object (Object) "x"');
  });
});

describe('a foreign value in the shared-slot global', () => {
  const run = promisify(execFile);
  it.each([
    ['a number', '42'],
    ['a frozen object', 'Object.freeze({ has: 1 })'],
    ['a Proxy whose traps throw', 'new Proxy(new Map(), { get() { throw new Error("trap"); } })'],
  ])('%s does not stop core from loading or reporting', async (_what, value) => {
    const script = [
      `globalThis[Symbol.for('@gym/core.shared.v1')] = ${value};`,
      `const core = await import(${JSON.stringify(packageFile('dist/index.js'))});`,
      `const a = core.sharedSlot('@gym/test/x@1', () => ({ n: 1 }));`,
      `const b = core.sharedSlot('@gym/test/x@1', () => ({ n: 2 }));`,
      `const r = core.createReporter('@gym/test');`,
      `r.warnOnce('k', 'm');`,
      `console.log(JSON.stringify({ same: a === b, reported: r.hasReported('k') }));`,
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    expect(JSON.parse(stdout)).toEqual({ same: true, reported: true });
  });
});

describe('a telemetry-state slot somebody made read-only', () => {
  it('setTelemetryState throws (the writer must know it did not publish); readers judge without a state', async () => {
    const script = [
      `Object.defineProperty(globalThis, Symbol.for('@gym/telemetry-state.v1'), { value: 42, writable: false, configurable: false });`,
      `const core = await import(${JSON.stringify(packageFile('dist/index.js'))});`,
      `const errors = [];`,
      `for (const init of [{ metricsExporting: true, tracesExporting: true, spanGroups: [], orchestrator: false }, undefined]) {`,
      `  try { core.setTelemetryState(init); } catch (error) { errors.push(error.name); }`,
      `}`,
      `console.log(JSON.stringify({ errors, exporting: core.isMetricsExporting(), groups: [...core.currentSpanGroups()].length }));`,
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    expect(JSON.parse(stdout)).toEqual({
      errors: ['TypeError', 'TypeError'],
      exporting: false,
      groups: SPAN_GROUP_PRESETS.default.length,
    });
  });
});
