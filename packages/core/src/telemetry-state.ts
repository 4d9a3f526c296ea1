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
import { readVariable } from './environment.js';

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

type StateSlot = { [GLOBAL_KEY]?: TelemetryState };

/** The published state, or `undefined` when nobody wrote one in this process. */
export function getTelemetryState(): TelemetryState | undefined {
  return (globalThis as StateSlot)[GLOBAL_KEY];
}

/**
 * Publishes the process's telemetry state (replacing any earlier one), or clears it with
 * `undefined`. Returns the frozen state that readers will see.
 */
export function setTelemetryState(init: TelemetryStateInit): TelemetryState;
export function setTelemetryState(init: undefined): undefined;
export function setTelemetryState(init: TelemetryStateInit | undefined): TelemetryState | undefined {
  const slot = globalThis as StateSlot;
  if (init === undefined) {
    delete slot[GLOBAL_KEY];
    return undefined;
  }
  const interval = init.sandboxSampleIntervalSeconds ?? 0;
  const state: TelemetryState = Object.freeze({
    version: TELEMETRY_STATE_VERSION,
    metricsExporting: init.metricsExporting === true,
    tracesExporting: init.tracesExporting === true,
    spanGroups: new Set(init.spanGroups),
    orchestrator: init.orchestrator === true,
    sandboxSampleIntervalSeconds: Number.isFinite(interval) && interval > 0 ? interval : 0,
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
type OtelGlobal = { [OTEL_API_KEY]?: { metrics?: unknown; trace?: unknown } };

/**
 * Whether metrics are exporting in this process: the published state says so, or, when
 * nobody published one, a MeterProvider is registered with the OpenTelemetry API.
 * One global read; allocation-free.
 */
export function isMetricsExporting(): boolean {
  const state = getTelemetryState();
  if (state !== undefined) return state.metricsExporting;
  return (globalThis as OtelGlobal)[OTEL_API_KEY]?.metrics !== undefined;
}

/**
 * Whether traces are exporting in this process: the published state says so, or, when
 * nobody published one, a TracerProvider is registered with the OpenTelemetry API.
 */
export function isTracesExporting(): boolean {
  const state = getTelemetryState();
  if (state !== undefined) return state.tracesExporting;
  return (globalThis as OtelGlobal)[OTEL_API_KEY]?.trace !== undefined;
}
