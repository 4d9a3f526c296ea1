// The process's telemetry state, published through one versioned global so that every
// copy of every gym-telemetry package in the process agrees (the technique
// @opentelemetry/api uses for its own globals). @gym/otel-bootstrap writes it; a user
// who sets up OpenTelemetry by hand may write it; library packages only read it.
//
// The major version is part of the global's key: a future incompatible shape gets a new
// key, so an old reader never misreads a new writer. Within a major, fields are only added.

import { types } from 'node:util';
import {
  DEFAULT_SPAN_GROUP_SPEC,
  ENV_SPAN_GROUPS,
  ENV_SPAN_GROUPS_FALLBACK,
  resolveSpanGroups,
  type SpanGroup,
} from '@gym/constants';
import { invalidChoice } from './describe-value.js';
import { readVariable } from './environment.js';
import { createReporter } from './report.js';

/** Major version of the state contract; part of the global key. */
export const TELEMETRY_STATE_VERSION = 1 as const;

/** The key of the global slot. `Symbol.for`, so two copies of this package share it. */
const GLOBAL_KEY: unique symbol = Symbol.for('@gym/telemetry-state.v1') as never;

const SPAN_GROUP_NAMES = [ENV_SPAN_GROUPS, ENV_SPAN_GROUPS_FALLBACK] as const;

/** What a writer publishes. */
export interface TelemetryStateInit {
  /** A real MeterProvider is set up and metrics are enabled. */
  readonly metricsExporting: boolean;
  /** A real TracerProvider with an exporter is set up and traces are enabled. */
  readonly tracesExporting: boolean;
  /** Enabled span groups. */
  readonly spanGroups: Iterable<SpanGroup>;
  /** This process is the fleet's orchestrator (the one writer of `gym.servers.active`). */
  readonly orchestrator: boolean;
  /** Sandbox resource sample interval in seconds; 0 disables sampling. */
  readonly sandboxSampleIntervalSeconds?: number;
}

/** The published state, frozen. */
export interface TelemetryState {
  readonly version: typeof TELEMETRY_STATE_VERSION;
  readonly metricsExporting: boolean;
  readonly tracesExporting: boolean;
  readonly spanGroups: ReadonlySet<SpanGroup>;
  readonly orchestrator: boolean;
  readonly sandboxSampleIntervalSeconds: number;
}

type StateSlot = { [GLOBAL_KEY]?: unknown };

const reporter = createReporter('@gym/core');

// Reading a symbol that globalThis does not have walks its prototype chain, which costs about
// as much as the rest of the off path together. So both slots this module reads on the hot
// path are made own properties holding `undefined` when absent: to every reader (any copy,
// the OpenTelemetry API's own `??` checks) `undefined` means exactly what absent means.
ensureOwnSlot(GLOBAL_KEY);

function ensureOwnSlot(key: symbol): void {
  try {
    if (!Object.hasOwn(globalThis, key)) {
      Object.defineProperty(globalThis, key, {
        value: undefined,
        writable: true,
        configurable: true,
        enumerable: false,
      });
    }
  } catch {
    // A frozen or hostile global: reads stay correct, only slower.
  }
}

// The slot is a global anybody can write, so what is read there is checked: a frozen plain
// state of the right shape (what setTelemetryState writes, in any copy of this package) is
// returned as is; another version-1 object with boolean `metricsExporting`/`tracesExporting`
// and a Set or array of `spanGroups` (written by hand) is read into a frozen copy; anything
// else (another major version, a number, a Proxy whose traps throw) counts as "nobody
// published", reported once. The verdict on a frozen value is kept, so the hot path stays one
// global read and one compare.
let seen: unknown;
let seenState: TelemetryState | undefined;

/** The published state, or `undefined` when nobody wrote one (or what is there is unreadable). Never throws. */
export function getTelemetryState(): TelemetryState | undefined {
  let raw: unknown;
  try {
    raw = (globalThis as StateSlot)[GLOBAL_KEY];
  } catch (error) {
    return unreadable(error);
  }
  // Small on purpose: this is the hot path, and it stays inlinable.
  if (raw === seen) return seenState;
  return raw === undefined ? undefined : judge(raw);
}

/** The verdict on a value not seen before (kept when the value is frozen). */
function judge(raw: unknown): TelemetryState | undefined {
  let state: TelemetryState | undefined;
  let frozen = false;
  try {
    frozen = Object.isFrozen(raw);
    state = stateOf(raw, frozen);
  } catch (error) {
    return unreadable(error);
  }
  if (frozen) {
    seen = raw;
    seenState = state;
  }
  return state ?? unreadable(undefined);
}

function unreadable(error: unknown): undefined {
  reporter.warnOnce(
    'telemetry-state',
    'the telemetry-state global holds a value this version cannot read; it is ignored (judged as if nobody published one)',
    error,
  );
  return undefined;
}

/** Own data property `key` of `raw` (never runs a getter), else `undefined`. */
function field(raw: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(raw, key);
  return descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined;
}

function stateOf(raw: unknown, frozen: boolean): TelemetryState | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  if (field(raw, 'version') !== TELEMETRY_STATE_VERSION) return undefined;
  const metricsExporting = field(raw, 'metricsExporting');
  const tracesExporting = field(raw, 'tracesExporting');
  const spanGroups = field(raw, 'spanGroups');
  const orchestrator = field(raw, 'orchestrator');
  const interval = field(raw, 'sandboxSampleIntervalSeconds');
  if (typeof metricsExporting !== 'boolean' || typeof tracesExporting !== 'boolean') return undefined;
  if (!(spanGroups instanceof Set) && !Array.isArray(spanGroups)) return undefined;
  if (
    frozen &&
    !types.isProxy(raw) &&
    spanGroups instanceof Set &&
    !types.isProxy(spanGroups) &&
    typeof orchestrator === 'boolean' &&
    typeof interval === 'number' &&
    Number.isFinite(interval) &&
    interval >= 0
  ) {
    return raw as TelemetryState;
  }
  return Object.freeze({
    version: TELEMETRY_STATE_VERSION,
    metricsExporting,
    tracesExporting,
    spanGroups: new Set([...spanGroups].filter((group): group is SpanGroup => typeof group === 'string')),
    orchestrator: orchestrator === true,
    sandboxSampleIntervalSeconds: intervalOf(interval),
  });
}

function intervalOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * Publishes the process's telemetry state (replacing any earlier one, or a foreign value), or
 * clears it with `undefined`. Returns the frozen state that readers will see. An `init` that is
 * not an object, or whose `spanGroups` is not iterable, is a `RangeError`; a slot somebody made
 * read-only throws the `TypeError` of the failed write (the writer must know it did not publish).
 */
export function setTelemetryState(init: TelemetryStateInit): TelemetryState;
export function setTelemetryState(init: undefined): undefined;
export function setTelemetryState(init: TelemetryStateInit | undefined): TelemetryState | undefined {
  const slot = globalThis as StateSlot;
  if (init === undefined) {
    Object.defineProperty(slot, GLOBAL_KEY, {
      value: undefined,
      enumerable: false,
      configurable: true,
      writable: true,
    });
    return undefined;
  }
  if (typeof init !== 'object' || init === null) {
    throw invalidChoice('setTelemetryState: init', init, 'a state object, or undefined to clear');
  }
  const groups = init.spanGroups;
  if (
    typeof (groups as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] !== 'function' ||
    typeof groups === 'string'
  ) {
    throw invalidChoice('setTelemetryState: init.spanGroups', groups, 'an iterable of span group names');
  }
  const state: TelemetryState = Object.freeze({
    version: TELEMETRY_STATE_VERSION,
    metricsExporting: init.metricsExporting === true,
    tracesExporting: init.tracesExporting === true,
    spanGroups: new Set(groups),
    orchestrator: init.orchestrator === true,
    sandboxSampleIntervalSeconds: intervalOf(init.sandboxSampleIntervalSeconds),
  });
  Object.defineProperty(slot, GLOBAL_KEY, { value: state, enumerable: false, configurable: true, writable: true });
  return state;
}

let envSpec: string | undefined;
let envGroups: ReadonlySet<SpanGroup> = new Set();

/**
 * The enabled span groups: the published state's, else resolved from
 * `NEMO_GYM_OTEL_SPAN_GROUPS` (then `NEMO_LENS_SPAN_GROUPS`, then `default`). The env
 * result is cached per spec string, so repeated calls cost one env read and a compare.
 */
export function currentSpanGroups(): ReadonlySet<SpanGroup> {
  const state = getTelemetryState();
  if (state !== undefined) return state.spanGroups;
  const spec = readVariable(process.env, SPAN_GROUP_NAMES)?.value ?? DEFAULT_SPAN_GROUP_SPEC;
  if (spec !== envSpec) {
    envGroups = resolveSpanGroups(spec).groups;
    envSpec = spec;
  }
  return envGroups;
}

// The OpenTelemetry API keeps its globals in `globalThis[Symbol.for('opentelemetry.js.api.1')]`
// (the cross-copy contract of every 1.x API), with a `metrics` / `trace` entry only once an
// SDK provider was registered. Reading that slot tells whether a real provider exists
// without importing the API here (this package keeps the API a peer it may not even load first).
const OTEL_API_KEY = Symbol.for('opentelemetry.js.api.1');
ensureOwnSlot(OTEL_API_KEY);
type OtelGlobal = { [OTEL_API_KEY]?: { metrics?: unknown; trace?: unknown } };

/**
 * Whether metrics are exporting in this process: the published state says so, or, when
 * nobody published one, a MeterProvider is registered with the OpenTelemetry API.
 * One global read; allocation-free.
 */
export function isMetricsExporting(): boolean {
  const state = getTelemetryState();
  if (state !== undefined) return state.metricsExporting;
  try {
    return (globalThis as OtelGlobal)[OTEL_API_KEY]?.metrics !== undefined;
  } catch {
    // An API global whose reads throw: no provider the libraries could use.
    return false;
  }
}

/**
 * Whether traces are exporting in this process: the published state says so, or, when
 * nobody published one, a TracerProvider is registered with the OpenTelemetry API.
 */
export function isTracesExporting(): boolean {
  const state = getTelemetryState();
  if (state !== undefined) return state.tracesExporting;
  try {
    return (globalThis as OtelGlobal)[OTEL_API_KEY]?.trace !== undefined;
  } catch {
    return false;
  }
}
