// The process's telemetry state, published through one global keyed by `Symbol.for` so that
// every copy of every gym-telemetry package in the process agrees (the technique
// @opentelemetry/api uses for its own globals). @gym/otel-bootstrap writes it; a user who sets
// up OpenTelemetry by hand may write it; library packages only read it. The major version is
// part of the key: an incompatible shape gets a new key, and within a major fields are only added.

import { DEFAULT_SPAN_GROUP_SPEC, isSpanGroup, resolveSpanGroups, SPAN_GROUPS, type SpanGroup } from '@gym/constants';
import { GYM_VARIABLES, readVariable } from './environment.js';
import { createReporter, describeValue, invalidChoice } from './report.js';

const GLOBAL_KEY: unique symbol = Symbol.for('@gym/telemetry-state.v1') as never;
// The OpenTelemetry API keeps its globals here (every 1.x API), with a `metrics` / `trace`
// entry only once an SDK provider was registered.
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
export interface TelemetryState {
  readonly version: 1;
  readonly metricsExporting: boolean;
  readonly tracesExporting: boolean;
  readonly spanGroups: ReadonlySet<SpanGroup>;
  readonly orchestrator: boolean;
  readonly sandboxSampleIntervalSeconds: number;
}

type Slots = { [GLOBAL_KEY]?: unknown; [OTEL_API_KEY]?: { metrics?: unknown; trace?: unknown } };
const slots = globalThis as Slots;

// Reading a symbol that globalThis does not have walks its prototype chain, which costs about
// as much as the rest of the off path together: both slots read on the hot path are own
// properties holding `undefined` when absent.
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

// Out of line, so that V8 inlines the reader above into every hot path (under 1 % of an off operation).
function judge(raw: unknown): TelemetryState | undefined {
  seen = raw;
  seenState = undefined;
  const state = raw as Partial<TelemetryState> | undefined;
  if (state?.version === 1 && state.spanGroups instanceof Set) {
    seenState = state as TelemetryState;
  } else if (raw !== undefined) {
    reporter.warnOnce(
      'telemetry-state',
      'the telemetry-state global holds a value not written by setTelemetryState; it is ignored (judged as if nobody published one)',
    );
  }
  return seenState;
}

/**
 * Publishes the process's telemetry state (replacing any earlier one), or clears it with
 * `undefined`. Returns the frozen state that readers will see. A slot somebody made read-only
 * throws the `TypeError` of the failed write: the writer must know it did not publish.
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

/**
 * The enabled span groups: the published state's, else resolved from
 * `NEMO_GYM_OTEL_SPAN_GROUPS` (then `NEMO_LENS_SPAN_GROUPS`, then `default`), cached per spec.
 */
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
