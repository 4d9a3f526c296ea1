// One process, one telemetry setup: the first initTelemetry decides for the life of the process
// (even "off"), concurrent callers share it, and a bad environment or a failed setup turns
// telemetry off with one warning, never a throw. The only process-wide state of gym-telemetry.

import { createRequire } from 'node:module';
import {
  ATTR_RUN_ID,
  ATTR_SERVER_NAME,
  ATTR_SERVER_TYPE,
  ATTR_SERVICE_GROUP,
  ATTR_VERSION,
  isServerType,
  resolveSpanGroups,
  SERVER_NAME_PATTERN,
  SERVER_TYPES,
  SPAN_GROUP_PRESETS,
  SPAN_GROUPS,
  type SpanGroup,
} from '@gym/constants';
import { getTelemetryState, setTelemetryState } from '@gym/core';
import { describeError, describeValue, invalidChoice } from '@gym/core/internal';
import type { Attributes, MeterProvider } from '@opentelemetry/api';
import { isSwitchedOff, loadTelemetryConfig, resolveRunId, shown, unknownVariablesWarning } from './config.js';
import { isGloballyRegistered } from './otel-globals.js';
import { checkPrometheusLimits } from './prometheus-limits.js';
import type { Pipeline, PipelineInput } from './sdk-pipeline.js';
import type { InitTelemetryOptions, TelemetryConfig, TelemetryHandle, TelemetryWarningHandler } from './types.js';
import { reportWarning } from './warnings.js';

interface Session {
  readonly pipeline: Pipeline;
  readonly orchestrator: boolean;
  readonly onWarning: TelemetryWarningHandler | undefined;
  readonly shutdownTimeoutMillis: number;
  readonly observer: { stop(): void } | undefined;
}

/** The first setup's promise; every later call returns it. */
let initPromise: Promise<TelemetryHandle | null> | undefined;
/** The handle once setup finished with telemetry on; `null` otherwise. */
let current: TelemetryHandle | null = null;
let session: Session | undefined;
let shutdownPromise: Promise<void> | undefined;

/**
 * Programming errors in the options fail fast, before any telemetry decision, with a message
 * naming the value and what is allowed; returns the Prometheus endpoint's bounds.
 */
function checkOptions(options: InitTelemetryOptions): Limits {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`initTelemetry: options must be an object; got ${describeValue(options)}`);
  }
  const { serverName, serverType, prometheus } = options;
  if (typeof serverName !== 'string' || serverName.trim() === '') {
    throw new TypeError(
      `initTelemetry: options.serverName must be a non-empty string; got ${describeValue(serverName)}`,
    );
  }
  if (!isServerType(serverType)) throw invalidChoice('initTelemetry: options.serverType', serverType, SERVER_TYPES);
  return checkPrometheusLimits(prometheus);
}

/** Publishes "nothing exports" (span groups shut) for libraries to read. */
function publishOff(orchestrator: boolean): void {
  setTelemetryState({ metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator });
}

const SDK_GLOBALS = [
  ['metrics', 'MeterProvider'],
  ['trace', 'TracerProvider'],
] as const;

/** Telemetry off while someone registered an SDK: say that the Gym libraries will not record into it. */
function offBesideSdkWarning(providers: readonly string[]): string {
  return (
    `NEMO_GYM_OTEL_ENABLED is off, so the Gym libraries record nothing, although a ${providers.join(' and a ')} ` +
    'is registered: set NEMO_GYM_OTEL_ENABLED=1 to record into it (it is reused), or pass meterProvider / ' +
    'tracerProvider in their options'
  );
}

function unknownGroupsWarning(unknown: readonly string[]): string {
  const more = unknown.length > 10 ? ` and ${unknown.length - 10} more` : '';
  const names = unknown.slice(0, 10).map((name) => shown(name, 40));
  return `unknown span groups ignored: ${names.join(', ')}${more} (allowed: presets ${Object.keys(SPAN_GROUP_PRESETS).join(', ')}; groups ${SPAN_GROUPS.join(', ')})`;
}

/** The one warning of a setup that reuses a provider someone else registered. */
function reusedWarning(reused: Pipeline['reused'], serviceName: string, config: TelemetryConfig): string {
  return (
    `${reused.join(' and ')} go to a provider registered before initTelemetry, with its own resource and ` +
    `exporters; not applied there: the Gym resource attributes (service.name "${serviceName}", nemo.run.id, ` +
    `nemo.gym.*) and the configured exporter (NEMO_GYM_OTEL_EXPORTER=${config.exporter})`
  );
}

type Limits = ReturnType<typeof checkPrometheusLimits>;

/** One warning for the first failed export, and one more if the final flush at shutdown fails: that one means records are lost. */
function exportFailureReporter(onWarning: TelemetryWarningHandler | undefined): PipelineInput['onExportFailure'] {
  const reported = { periodic: false, final: false };
  return (signal, error, final) => {
    const kind = final ? 'final' : 'periodic';
    if (reported[kind]) return;
    reported[kind] = true;
    reportWarning(
      onWarning,
      final
        ? `${signal} export failed (${describeError(error)}) in the final flush at shutdown; what was recorded since the last successful export is lost`
        : `${signal} export failed (${describeError(error)}); telemetry carries on, and later export failures are not reported again`,
    );
  };
}

/**
 * Step 1: the config, read once; a string when telemetry stays off (the warning to say, or
 * `''` for none). The whole cost of a disabled process is the switch and the names of the
 * environment (a misspelt NEMO_GYM_OTEL_ENABLED must not leave telemetry off in silence).
 */
function readConfig(env: NodeJS.ProcessEnv, onWarning: TelemetryWarningHandler | undefined): TelemetryConfig | string {
  if (isSwitchedOff(env)) {
    const unknown = unknownVariablesWarning(env);
    if (unknown !== undefined) reportWarning(onWarning, unknown);
    const theirs = SDK_GLOBALS.filter(([kind]) => isGloballyRegistered(kind)).map(([, name]) => name);
    return theirs.length > 0 ? offBesideSdkWarning(theirs) : '';
  }
  const result = loadTelemetryConfig(env);
  for (const warning of result.warnings) reportWarning(onWarning, warning);
  if (!result.ok) return `telemetry is disabled: ${result.error}`;
  // NEMO_GYM_OTEL_ENABLED is on, so only the standard off-switch can have said off.
  if (!result.config.enabled) return 'telemetry is off: OTEL_SDK_DISABLED=true wins over NEMO_GYM_OTEL_ENABLED';
  return Object.freeze({ ...result.config, runId: resolveRunId(result.config.runId, env) });
}

/** Step 2: the resource attributes. Gym's five keys are what the dashboards group by: a caller adds to the resource, never renames the process. */
function gymAttributes(options: InitTelemetryOptions, config: TelemetryConfig, version: string): Attributes {
  return {
    ...options.resourceAttributes,
    [ATTR_VERSION]: version,
    [ATTR_SERVER_NAME]: options.serverName,
    [ATTR_SERVER_TYPE]: options.serverType,
    [ATTR_SERVICE_GROUP]: config.serviceName,
    [ATTR_RUN_ID]: config.runId,
  };
}

/** Step 4: @gym/observer on the provider that receives this process's metrics; loaded like the SDK, only when it runs. */
async function startObserverOn(
  meterProvider: MeterProvider,
  serverName: string,
  onWarning: TelemetryWarningHandler | undefined,
): Promise<Session['observer']> {
  try {
    const { startObserver } = await import('@gym/observer');
    return startObserver({ meterProvider, ...(SERVER_NAME_PATTERN.test(serverName) ? { serverName } : {}) });
  } catch (error) {
    reportWarning(onWarning, `the observer did not start (${describeError(error)}); telemetry carries on without it`);
    return undefined;
  }
}

/** Step 5: what the libraries read: what exports, the span groups (see below), the sandbox sampling. */
function publishOn(pipeline: Pipeline, config: TelemetryConfig, groups: ReadonlySet<SpanGroup>, orchestrator: boolean) {
  setTelemetryState({
    metricsExporting: pipeline.metricsExporting,
    tracesExporting: pipeline.tracesExporting,
    // Published whenever something exports: they gate spans (only while traces export, see
    // isSpanGroupEnabled) and also group-scoped metrics, such as the sandbox lifecycle series,
    // which must follow the `sandbox` group in a metrics-only process too.
    spanGroups: pipeline.tracesExporting || pipeline.metricsExporting ? groups : [],
    orchestrator,
    sandboxSampleIntervalSeconds: pipeline.tracesExporting ? config.sandboxResourceSampleIntervalSeconds : 0,
  });
}

async function setUp(options: InitTelemetryOptions, prometheusLimits: Limits): Promise<TelemetryHandle | null> {
  const orchestrator = options.serverType === 'orchestrator';
  const { onWarning, env = process.env } = options;
  // What was started before a failure, to be undone by it.
  let pipeline: Pipeline | undefined;
  let observer: Session['observer'];
  const off = (warning: string): null => {
    publishOff(orchestrator);
    if (warning !== '') reportWarning(onWarning, warning);
    return null;
  };
  try {
    const config = readConfig(env, onWarning);
    if (typeof config === 'string') return off(config);
    const groups = resolveSpanGroups(config.spanGroups);
    if (groups.unknown.length > 0) reportWarning(onWarning, unknownGroupsWarning(groups.unknown));
    const serviceName = config.serviceNamePerServer
      ? `${config.serviceName}/${options.serverName}`
      : config.serviceName;
    // Read at setup, not baked in at build time, so a release bump cannot forget it.
    const { version } = createRequire(import.meta.url)('../package.json') as { version: string };
    const { startPipeline } = await import('./sdk-pipeline.js');
    pipeline = await startPipeline({
      config,
      serviceName,
      attributes: gymAttributes(options, config, version),
      version,
      onExportFailure: exportFailureReporter(onWarning),
      prometheusLimits,
    });
    if (pipeline.problems.length > 0) {
      const signals = [...new Set(pipeline.problems.map((problem) => problem.signal))];
      reportWarning(
        onWarning,
        `${signals.join(' and ')} not exporting: ${pipeline.problems.map((problem) => problem.reason).join('; ')}`,
      );
    }
    if (pipeline.reused.length > 0) reportWarning(onWarning, reusedWarning(pipeline.reused, serviceName, config));
    const handle: TelemetryHandle = Object.freeze({
      meter: pipeline.meter,
      tracer: pipeline.tracer,
      isExporting: pipeline.metricsExporting || pipeline.tracesExporting,
      metricsExporting: pipeline.metricsExporting,
      tracesExporting: pipeline.tracesExporting,
      config,
      serviceName,
      gymResourceApplied: pipeline.reused.length === 0,
      ...(pipeline.prometheusEndpoint === undefined ? {} : { prometheusEndpoint: pipeline.prometheusEndpoint }),
    });
    if (config.observer && pipeline.meterProvider !== undefined) {
      observer = await startObserverOn(pipeline.meterProvider, options.serverName, onWarning);
    }
    session = { pipeline, orchestrator, onWarning, shutdownTimeoutMillis: config.shutdownTimeoutMillis, observer };
    // A shutdownTelemetry() during setup (a SIGTERM at startup) releases the session; no handle.
    if (shutdownPromise !== undefined) return null;
    current = handle;
    publishOn(pipeline, config, groups.groups, orchestrator);
    return handle;
  } catch (error) {
    session = undefined;
    current = null;
    observer?.stop();
    void pipeline?.shutdown(0);
    return off(`telemetry is disabled: setup failed (${describeError(error)})`);
  }
}

/**
 * Sets up this process's telemetry from the environment, once: the first call decides, and
 * every later or concurrent call returns the same promise, whatever its options. Resolves to
 * a {@link TelemetryHandle} when `NEMO_GYM_OTEL_ENABLED` is on, else `null`; after
 * {@link shutdownTelemetry}, `null`. Rejects only on programming errors in `options`; a
 * malformed variable or a failed setup resolves `null` after one warning (see the README's
 * failure policy).
 */
export function initTelemetry(options: InitTelemetryOptions): Promise<TelemetryHandle | null> {
  let limits: Limits;
  try {
    limits = checkOptions(options);
  } catch (error) {
    return Promise.reject(error);
  }
  if (shutdownPromise !== undefined) return Promise.resolve(null);
  initPromise ??= setUp(options, limits);
  return initPromise;
}

/** The handle of a finished, enabled setup; `null` before, when disabled, and after shutdown. */
export function getTelemetry(): TelemetryHandle | null {
  return current;
}

/**
 * Flushes what `initTelemetry` built, so everything recorded before the call is exported,
 * then unregisters it and publishes "nothing exports". Resolves within
 * `NEMO_GYM_OTEL_SHUTDOWN_TIMEOUT_MILLIS` even when the collector never answers (one warning
 * says what may be lost). Providers registered by someone else are left running. Idempotent;
 * waits for a setup in progress; never rejects.
 */
export function shutdownTelemetry(): Promise<void> {
  if (initPromise === undefined) return Promise.resolve();
  const pending = initPromise;
  shutdownPromise ??= (async () => {
    await pending;
    const ending = session;
    session = undefined;
    current = null;
    if (ending === undefined) return;
    publishOff(ending.orchestrator);
    // The observer's last values go out with the final flush; then it stops.
    const { errors, timedOut } = await ending.pipeline.shutdown(ending.shutdownTimeoutMillis);
    ending.observer?.stop();
    const said = [
      timedOut
        ? `did not finish within ${ending.shutdownTimeoutMillis} ms (NEMO_GYM_OTEL_SHUTDOWN_TIMEOUT_MILLIS); records not exported by then may be lost`
        : undefined,
      errors.length > 0 ? `met ${errors.length} error(s): ${errors.map(describeError).join('; ')}` : undefined,
    ].filter((part) => part !== undefined);
    if (said.length > 0) reportWarning(ending.onWarning, `telemetry shutdown ${said.join('; it ')}`);
  })();
  return shutdownPromise;
}

/**
 * True when spans of `group` should be made in this process: the published telemetry state
 * (written by `initTelemetry`, or by hand) lists the group while traces export. False when
 * nothing was published yet. It sits in front of every optional span: one read, one lookup.
 */
export function isSpanGroupEnabled(group: SpanGroup): boolean {
  const state = getTelemetryState();
  return state?.tracesExporting === true && state.spanGroups.has(group);
}

/**
 * For this package's tests, which import it from this module: the package entry does not
 * export it, so no server can reach it. Shuts telemetry down (as {@link shutdownTelemetry}),
 * then forgets the setup and clears the published telemetry state, so the next
 * `initTelemetry` decides afresh. Providers registered by someone else are not touched.
 */
export async function resetTelemetryForTesting(): Promise<void> {
  await shutdownTelemetry();
  initPromise = undefined;
  shutdownPromise = undefined;
  session = undefined;
  current = null;
  setTelemetryState(undefined);
}
