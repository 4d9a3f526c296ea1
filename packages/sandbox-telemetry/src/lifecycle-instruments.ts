// The sandbox lifecycle metrics (Gym's names): sandboxes held, time to create one, time of
// one exec, create retries, each by `nemo.gym.sandbox.provider` and nothing else (a sandbox
// id would make every series unique; ids belong on the records, which are spans). Unlike the
// records these are metrics, but they follow Gym's rule for the `sandbox` span group: with
// the group off, none is recorded, whatever meter was injected (a meter says where, the
// group says whether).
//
// Instruments are made once per Meter (constructor) and cached in a WeakMap; attribute
// objects are made once per provider name and reused.

import {
  ATTR_SANDBOX_PROVIDER,
  METRIC_SANDBOX_ACTIVE,
  METRIC_SANDBOX_CREATE_RETRY,
  METRIC_SANDBOX_EXEC_DURATION,
  METRIC_SANDBOX_STARTUP_DURATION,
  SANDBOX_DURATION_BOUNDARIES_MS,
  SANDBOX_PROVIDER_PATTERN,
  UNIT_SANDBOX,
} from '@gym/constants';
import {
  currentSpanGroups,
  invalidChoice,
  isMetricsExporting,
  type MeterSourceOptions,
  perMeter,
  resolveMeter,
  wouldRecordMetrics,
} from '@gym/core';
import {
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  type UpDownCounter,
  ValueType,
} from '@opentelemetry/api';
import { injectedSource, isObject, ownOption, UNREADABLE } from './own-data.js';
import { reporter, SCOPE } from './report.js';

/** Unit of the create retry counter (UCUM's dimensionless unit, as Gym declares it). */
const UNIT_RETRY = '1';
/** Provider names whose attribute objects are kept; more (never seen in practice) are rebuilt per call. */
const MAX_CACHED_PROVIDERS = 64;

/** The four lifecycle instruments of one meter. */
export class SandboxLifecycleInstruments {
  readonly active: UpDownCounter;
  readonly startupDuration: Histogram;
  readonly execDuration: Histogram;
  readonly createRetries: Counter;

  constructor(meter: Meter) {
    const advice = { explicitBucketBoundaries: [...SANDBOX_DURATION_BOUNDARIES_MS] };
    this.active = meter.createUpDownCounter(METRIC_SANDBOX_ACTIVE, {
      description: 'Sandboxes held right now by this process.',
      unit: UNIT_SANDBOX,
      valueType: ValueType.INT,
    });
    this.startupDuration = meter.createHistogram(METRIC_SANDBOX_STARTUP_DURATION, {
      description: 'Time to create one sandbox, retries included.',
      unit: 'ms',
      advice,
    });
    this.execDuration = meter.createHistogram(METRIC_SANDBOX_EXEC_DURATION, {
      description: 'One exec inside a sandbox.',
      unit: 'ms',
      advice,
    });
    this.createRetries = meter.createCounter(METRIC_SANDBOX_CREATE_RETRY, {
      description: 'Sandbox create attempts retried.',
      unit: UNIT_RETRY,
      valueType: ValueType.INT,
    });
  }
}

const instrumentsOf = perMeter((meter) => new SandboxLifecycleInstruments(meter));
const byProvider = new Map<string, Attributes>();
let lastProvider: unknown = Symbol('no provider yet');
let lastAttributes: Attributes | undefined;

/**
 * The instruments to record on, or `undefined`: nothing injected and metrics not exporting,
 * the `sandbox` span group off, or the meter failed (reported once, retried next call).
 * Never throws.
 */
export function lifecycleInstruments(source: MeterSourceOptions | undefined): SandboxLifecycleInstruments | undefined {
  if (!wouldRecordMetrics(source) || !currentSpanGroups().has('sandbox')) return undefined;
  const meter = resolveMeter(source, SCOPE, reporter);
  if (meter === undefined) return undefined;
  try {
    return instrumentsOf(meter);
  } catch (error) {
    reportMetricFailure(error);
    return undefined;
  }
}

/**
 * The instruments a lifecycle recorder with these options records on now (see
 * {@link lifecycleInstruments}), or `undefined`. The common "off" case (metrics not exporting,
 * nothing injected) costs the exporting check and two plain property reads. Never throws.
 */
export function instrumentsFor(options: unknown): SandboxLifecycleInstruments | undefined {
  if (!isMetricsExporting() && !mayInject(options)) return undefined;
  return lifecycleInstruments(meterSource(options));
}

/** False when `options` certainly injects nothing (both fields nullish); true when it may (then read carefully). */
function mayInject(options: unknown): boolean {
  if (!isObject(options)) return false;
  try {
    const o = options as { meter?: unknown; meterProvider?: unknown };
    return o.meter != null || o.meterProvider != null;
  } catch {
    return true;
  }
}

/**
 * The meter source named by `options` (own properties only), or `undefined` when nothing
 * is injected: no allocation on the common path.
 */
export function meterSource(options: unknown): MeterSourceOptions | undefined {
  return injectedSource(options, 'meter', 'meterProvider') as MeterSourceOptions | undefined;
}

/**
 * `{ 'nemo.gym.sandbox.provider': provider }`, built once per name. `undefined` when the
 * option could not be read (its getter threw: reported once, nothing recorded). A readable
 * value that is not a provider name is a programming error: a `RangeError` naming it, on or off.
 */
export function providerAttributes(options: unknown): Attributes | undefined {
  const provider = ownOption(options, 'provider');
  // Most processes use one provider name: compared first, it spares the map lookup.
  if (provider === lastProvider) return lastAttributes;
  if (typeof provider === 'string') {
    const cached = byProvider.get(provider);
    if (cached !== undefined) {
      lastProvider = provider;
      lastAttributes = cached;
      return cached;
    }
  }
  if (provider === UNREADABLE) return undefined;
  if (typeof provider !== 'string' || !SANDBOX_PROVIDER_PATTERN.test(provider)) {
    throw invalidChoice('provider', provider, `a string matching ${SANDBOX_PROVIDER_PATTERN}`);
  }
  const attributes: Attributes = Object.freeze({ [ATTR_SANDBOX_PROVIDER]: provider });
  if (byProvider.size < MAX_CACHED_PROVIDERS) byProvider.set(provider, attributes);
  return attributes;
}

/** Reports, once per process, that a lifecycle instrument failed; the value was dropped. */
export function reportMetricFailure(error: unknown): void {
  reporter.warnOnce(
    'lifecycle-metric',
    'recording a sandbox lifecycle metric failed; the value was dropped (the next call tries again)',
    error,
  );
}
