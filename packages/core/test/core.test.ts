import {
  createReporter,
  describeValue,
  GYM_VARIABLES,
  invalidChoice,
  readGymVariable,
  resolveMeter,
  sharedSlot,
} from '@gym/core/internal';
import { afterEach, describe, expect, it } from '@jest/globals';
import { type DiagLogger, DiagLogLevel, diag, type Meter, type MeterProvider } from '@opentelemetry/api';
import { MeterProvider as SdkMeterProvider } from '@opentelemetry/sdk-metrics';

function captureDiag(logger: Partial<DiagLogger> = {}): string[] {
  const lines: string[] = [];
  const noop = () => {};
  diag.setLogger(
    {
      error: noop,
      info: noop,
      debug: noop,
      verbose: noop,
      warn: (message: string) => lines.push(message),
      ...logger,
    },
    { logLevel: DiagLogLevel.ALL, suppressOverrideMessage: true },
  );
  return lines;
}

afterEach(() => diag.disable());

describe('describeValue', () => {
  it('names the type and a short rendering', () => {
    expect(describeValue('verfy')).toBe('string "verfy"');
    expect(describeValue(Number.NaN)).toBe('number NaN');
    expect(describeValue(['verify'])).toBe('object (Array) ["verify"]');
    expect(describeValue(null)).toBe('null');
    expect(describeValue(undefined)).toBe('undefined');
    expect(describeValue(new String('verify'))).toBe('object (String) "verify"');
  });

  it('caps huge values', () => {
    const text = describeValue('a'.repeat(100_000));
    expect(text.length).toBeLessThan(120);
    expect(text).toContain('(100000 chars)');
  });

  it('renders what JSON cannot (a cycle, a BigInt) without throwing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(describeValue(cyclic)).toBe('object (Object) {…}');
    expect(describeValue({ n: 10n })).toBe('object (Object) {…}');
    expect(describeValue(10n)).toBe('bigint 10');
    expect(describeValue(Symbol('s'))).toBe('symbol s');
    expect(describeValue(() => 1)).toBe('function');
  });

  it('invalidChoice is a RangeError naming the value and what is allowed', () => {
    const error = invalidChoice('operation', ['verify'], ['verify', 'tool']);
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toBe('operation must be one of "verify", "tool"; got object (Array) ["verify"]');
  });
});

describe('createReporter', () => {
  it('reports once per kind, at warn level, with the package prefix', () => {
    const lines = captureDiag();
    const reporter = createReporter('@gym/test-once');
    reporter.warnOnce('a', 'first', new Error('why'));
    reporter.warnOnce('a', 'again');
    reporter.warnOnce('b', () => 'other');
    expect(lines).toEqual(['@gym/test-once: first: Error: why', '@gym/test-once: other']);
  });

  it('survives a throwing logger and a throwing message builder', () => {
    captureDiag({
      warn: () => {
        throw new Error('logger down');
      },
    });
    const reporter = createReporter('@gym/test-throwing');
    expect(() => reporter.warnOnce('x', 'message')).not.toThrow();
    expect(() =>
      reporter.warnOnce('y', () => {
        throw new Error('builder');
      }),
    ).not.toThrow();
  });
});

describe('sharedSlot', () => {
  it('gives every caller (every copy of a package) the same object, on a non-enumerable global', () => {
    const a = sharedSlot('@gym/test/slot@1', () => ({ n: 0 }));
    const b = sharedSlot('@gym/test/slot@1', () => ({ n: 99 }));
    expect(a).toBe(b);
    expect(Object.keys(globalThis)).not.toContain(String(Symbol.for('@gym/core.shared.v1')));
    const holder = (globalThis as Record<symbol, Map<string, unknown>>)[Symbol.for('@gym/core.shared.v1')];
    expect(holder?.get('@gym/test/slot@1')).toBe(a);
  });
});

describe('the environment grammar', () => {
  const interval = GYM_VARIABLES.sandboxResourceSampleIntervalSeconds;
  it.each([
    ['5', 5],
    [' 0.5 ', 0.5],
    ['.25', 0.25],
    ['0', 0],
    ['0.1', 0.1],
  ])('interval %j is %d', (raw, value) => {
    expect(readGymVariable({ NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS: raw }, interval)).toMatchObject({
      ok: true,
      value,
    });
  });

  it.each(['1e1', '-1', '0x10', '5s', '0.05', '99999999', 'Infinity', '1_000'])('interval %j is malformed', (raw) => {
    const result = readGymVariable({ NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS: raw }, interval);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toContain('NEMO_GYM_OTEL_SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS=');
      expect(result.message).toContain(JSON.stringify(raw));
      expect(result.message).toContain('allowed:');
    }
  });

  it('falls back to NEMO_LENS_ when the first name is unset or blank', () => {
    expect(
      readGymVariable({ NEMO_GYM_OTEL_ENABLED: '  ', NEMO_LENS_ENABLED: 'On ' }, GYM_VARIABLES.enabled),
    ).toMatchObject({ ok: true, value: true, from: { name: 'NEMO_LENS_ENABLED' } });
    expect(readGymVariable({}, GYM_VARIABLES.enabled)).toMatchObject({ ok: true, value: false, from: undefined });
  });
});

describe('resolveMeter', () => {
  const scope = { name: '@gym/test' };

  it('treats null as not injected, like undefined', () => {
    expect(resolveMeter({ meterProvider: null }, scope, createReporter('@gym/test-null'))).toBeUndefined();
  });

  it("uses an injected provider's meter for the scope, one per provider and scope", () => {
    const provider = new SdkMeterProvider();
    const meter = resolveMeter({ meterProvider: provider }, scope, createReporter('@gym/t1'));
    expect(meter).toBe(provider.getMeter(scope.name));
    expect(resolveMeter({ meterProvider: provider }, scope, createReporter('@gym/t1'))).toBe(meter);
  });

  it('reports a failing provider once and retries it on the next call (never cached as dead)', () => {
    const lines = captureDiag();
    let fail = true;
    const real = new SdkMeterProvider();
    const provider: MeterProvider = {
      getMeter(name: string): Meter {
        if (fail) throw new Error('not yet');
        return real.getMeter(name);
      },
    };
    const reporter = createReporter('@gym/test-retry');
    expect(resolveMeter({ meterProvider: provider }, scope, reporter)).toBeUndefined();
    expect(resolveMeter({ meterProvider: provider }, scope, reporter)).toBeUndefined();
    expect(lines).toHaveLength(1);
    fail = false;
    expect(resolveMeter({ meterProvider: provider }, scope, reporter)).toBeDefined();
  });
});

describe('the hot-path slots', () => {
  it('are own properties of globalThis holding undefined when nothing is published (no prototype walk on the off path)', async () => {
    const { setTelemetryState, isMetricsExporting } = await import('@gym/core');
    const stateKey = Symbol.for('@gym/telemetry-state.v1');
    setTelemetryState(undefined);
    expect(Object.hasOwn(globalThis, stateKey)).toBe(true);
    expect((globalThis as Record<symbol, unknown>)[stateKey]).toBeUndefined();
    expect(Object.hasOwn(globalThis, Symbol.for('opentelemetry.js.api.1'))).toBe(true);
    expect(Object.keys(globalThis)).not.toContain(stateKey);
    expect(isMetricsExporting()).toBe(false);
  });
});

describe('perMeter', () => {
  it('makes once per meter, keeps nothing when making throws, and tries again next call', async () => {
    const { perMeter } = await import('@gym/core/internal');
    const provider = new SdkMeterProvider();
    const a = provider.getMeter('a');
    const b = provider.getMeter('b');
    let calls = 0;
    let fail = true;
    const memo = perMeter((meter) => {
      calls += 1;
      if (fail) throw new Error('not yet');
      return { meter };
    });
    expect(() => memo(a)).toThrow('not yet');
    fail = false;
    const first = memo(a);
    expect(memo(a)).toBe(first);
    expect(memo(b)).not.toBe(first);
    expect(calls).toBe(3);
  });
});
