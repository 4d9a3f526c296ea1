// The process's telemetry state, in one global keyed by `Symbol.for` (as @opentelemetry/api keeps
// its own) so that every copy of every gym-telemetry package agrees. @gym/otel-bootstrap or a user
// writes it; libraries only read it. Within a major version of the key fields are only added.

import { DEFAULT_SPAN_GROUP_SPEC, isSpanGroup, resolveSpanGroups, SPAN_GROUPS, type SpanGroup } from '@gym/constants';
import { GYM_VARIABLES, readVariable } from './environment.js';
import { createReporter, describeValue, invalidChoice } from './report.js';

const GLOBAL_KEY: unique symbol = Symbol.for('@gym/telemetry-state.v1') as never;
// Every 1.x OpenTelemetry API keeps its globals here, with `metrics` / `trace` once a provider is registered.
const OTEL_API_KEY: unique symbol = Symbol.for('opentelemetry.js.api.1') as never;

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
export interface TelemetryState extends Required<Omit<TelemetryStateInit, 'spanGroups'>> {
  readonly version: 1;
  readonly spanGroups: ReadonlySet<SpanGroup>;
}

type Slots = { [GLOBAL_KEY]?: unknown; [OTEL_API_KEY]?: { metrics?: unknown; trace?: unknown } };
const slots = globalThis as Slots;

// Reading a symbol globalThis lacks walks its prototype chain: both slots read on the hot path are
// own properties, holding `undefined` when absent, so the off path stays one property read.
for (const key of [GLOBAL_KEY, OTEL_API_KEY]) {
  if (!Object.hasOwn(globalThis, key)) {
    Object.defineProperty(globalThis, key, { value: undefined, writable: true, configurable: true });
  }
}

const reporter = createReporter('@gym/core');

// The verdict on the last value seen in the slot, kept by identity: one global read, one compare.
let seen: unknown;
let seenState: TelemetryState | undefined;

/** The published state, or `undefined` when nobody wrote one (or what is there is unreadable). */
export function getTelemetryState(): TelemetryState | undefined {
  const raw = slots[GLOBAL_KEY];
  return raw === seen ? seenState : judge(raw);
}

// Out of line, so that the reader above stays small enough to inline into every hot path.
function judge(raw: unknown): TelemetryState | undefined {
  seen = raw;
  const state = raw as Partial<TelemetryState> | undefined;
  seenState = state?.version === 1 && state.spanGroups instanceof Set ? (state as TelemetryState) : undefined;
  if (raw !== undefined && seenState === undefined) {
    reporter.warnOnce('telemetry-state', 'the telemetry-state global holds a value of another shape; it is ignored');
  }
  return seenState;
}

/**
 * Publishes the process's telemetry state (replacing any earlier one), or clears it with
 * `undefined`; returns the frozen state readers will see. A failed write (a read-only slot) throws.
 */
export function setTelemetryState(init: TelemetryStateInit): TelemetryState;
export function setTelemetryState(init: undefined): undefined;
export function setTelemetryState(init: TelemetryStateInit | undefined): TelemetryState | undefined {
  if (init !== undefined) checkInit(init);
  const interval = init?.sandboxSampleIntervalSeconds;
  const state: TelemetryState | undefined = init && {
    version: 1,
    metricsExporting: init.metricsExporting,
    tracesExporting: init.tracesExporting,
    spanGroups: new Set(init.spanGroups),
    orchestrator: init.orchestrator,
    // 0 disables sampling, and so does anything that is not a finite positive number.
    sandboxSampleIntervalSeconds: interval !== undefined && interval > 0 && interval < Infinity ? interval : 0,
  };
  slots[GLOBAL_KEY] = state && Object.freeze(state);
  return state;
}

/** A wrong field is a programming error: a string `"false"` must not switch metrics on. */
function checkInit(init: TelemetryStateInit): void {
  const what = (field: string) => `setTelemetryState: init.${field}`;
  if (typeof init !== 'object' || init === null) {
    throw new TypeError(`setTelemetryState: init must be an object or undefined; got ${describeValue(init)}`);
  }
  for (const field of ['metricsExporting', 'tracesExporting', 'orchestrator'] as const) {
    if (typeof init[field] !== 'boolean') throw invalidChoice(what(field), init[field], 'true or false');
  }
  const groups = init.spanGroups as unknown;
  if (typeof (groups as Iterable<unknown> | null)?.[Symbol.iterator] !== 'function' || typeof groups === 'string') {
    throw new TypeError(`${what('spanGroups')} must be an iterable of span group names; got ${describeValue(groups)}`);
  }
  for (const group of groups as Iterable<unknown>) {
    if (!isSpanGroup(group)) throw invalidChoice(`${what('spanGroups')} entry`, group, SPAN_GROUPS);
  }
}

let envSpec: string | undefined;
let envGroups: ReadonlySet<SpanGroup> = new Set();

/** The enabled span groups: the published state's, else `NEMO_GYM_OTEL_SPAN_GROUPS`'s (cached per spec). */
export function currentSpanGroups(): ReadonlySet<SpanGroup> {
  const state = getTelemetryState();
  if (state !== undefined) return state.spanGroups;
  const spec = readVariable(process.env, GYM_VARIABLES.spanGroups.names)?.value ?? DEFAULT_SPAN_GROUP_SPEC;
  if (spec !== envSpec) {
    envGroups = resolveSpanGroups(spec).groups;
    envSpec = spec;
  }
  return envGroups;
}

/** Whether metrics export: as published, else whether a MeterProvider is registered with the API. */
export function isMetricsExporting(): boolean {
  const state = getTelemetryState();
  return state === undefined ? slots[OTEL_API_KEY]?.metrics !== undefined : state.metricsExporting;
}

/** Whether traces export: as published, else whether a TracerProvider is registered with the API. */
export function isTracesExporting(): boolean {
  const state = getTelemetryState();
  return state === undefined ? slots[OTEL_API_KEY]?.trace !== undefined : state.tracesExporting;
}
