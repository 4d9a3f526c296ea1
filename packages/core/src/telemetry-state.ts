// The process's telemetry state, published through one versioned global so that every
// copy of every gym-telemetry package in the process agrees (the technique
// @opentelemetry/api uses for its own globals). @gym/otel-bootstrap writes it; a user
// who sets up OpenTelemetry by hand may write it; library packages only read it.
//
// The major version is part of the global's key: a future incompatible shape gets a new
// key, so an old reader never misreads a new writer. Within a major, fields are only added.

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
const TELEMETRY_STATE_VERSION = 1 as const;

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
// as much as the rest of the off path together: both slots read on the hot path are own
// properties holding `undefined` when absent (to every reader `undefined` means absent).
for (const key of [GLOBAL_KEY, Symbol.for('opentelemetry.js.api.1')]) {
  if (!Object.hasOwn(globalThis, key)) {
    Object.defineProperty(globalThis, key, { value: undefined, writable: true, configurable: true });
  }
}

// The verdict on the last value seen in the slot, kept by identity whatever its shape, so the
// hot path is one global read and one compare. A hand-written state is read once: to change
// it, publish a new object.
let seen: unknown;
let seenState: TelemetryState | undefined;

/** The published state, or `undefined` when nobody wrote one (or what is there is unreadable). */
export function getTelemetryState(): TelemetryState | undefined {
  const raw = (globalThis as StateSlot)[GLOBAL_KEY];
  if (raw === seen) return seenState;
  seen = raw;
  seenState = raw === undefined ? undefined : stateOf(raw);
  return seenState;
}

/**
 * A version-1 state as published by `setTelemetryState` (any copy) is used as is; another
 * version-1 object with boolean `metricsExporting`/`tracesExporting` and a Set or array of
 * `spanGroups` (written by hand) is read into a frozen copy; anything else counts as "nobody
 * published", reported once.
 */
function stateOf(raw: unknown): TelemetryState | undefined {
  const state = raw as Partial<Record<keyof TelemetryState, unknown>> | null;
  if (
    typeof state !== 'object' ||
    state === null ||
    state.version !== TELEMETRY_STATE_VERSION ||
    typeof state.metricsExporting !== 'boolean' ||
    typeof state.tracesExporting !== 'boolean' ||
    !(state.spanGroups instanceof Set || Array.isArray(state.spanGroups))
  ) {
    reporter.warnOnce(
      'telemetry-state',
      'the telemetry-state global holds a value this version cannot read; it is ignored (judged as if nobody published one)',
    );
    return undefined;
  }
  if (Object.isFrozen(state) && state.spanGroups instanceof Set && typeof state.orchestrator === 'boolean') {
    return state as TelemetryState;
  }
  return Object.freeze({
    version: TELEMETRY_STATE_VERSION,
    metricsExporting: state.metricsExporting,
    tracesExporting: state.tracesExporting,
    spanGroups: new Set([...state.spanGroups].filter((group): group is SpanGroup => typeof group === 'string')),
    orchestrator: state.orchestrator === true,
    sandboxSampleIntervalSeconds: intervalOf(state.sandboxSampleIntervalSeconds),
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
// SDK provider was registered. Reading that slot tells whether a real provider exists without
// importing the API here.
const OTEL_API_KEY = Symbol.for('opentelemetry.js.api.1');
type OtelGlobal = { [OTEL_API_KEY]?: { metrics?: unknown; trace?: unknown } };

/**
 * Whether metrics are exporting in this process: the published state says so, or, when
 * nobody published one, a MeterProvider is registered with the OpenTelemetry API.
 */
export function isMetricsExporting(): boolean {
  const state = getTelemetryState();
  return state === undefined ? (globalThis as OtelGlobal)[OTEL_API_KEY]?.metrics !== undefined : state.metricsExporting;
}

/**
 * Whether traces are exporting in this process: the published state says so, or, when
 * nobody published one, a TracerProvider is registered with the OpenTelemetry API.
 */
export function isTracesExporting(): boolean {
  const state = getTelemetryState();
  return state === undefined ? (globalThis as OtelGlobal)[OTEL_API_KEY]?.trace !== undefined : state.tracesExporting;
}
