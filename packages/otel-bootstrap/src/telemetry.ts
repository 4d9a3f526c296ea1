// One process, one telemetry setup: the first initTelemetry decides for the life of the process
// (even "off"), and a bad environment or a failed setup turns telemetry off with one warning.

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
import { checkPrometheusLimits, type PrometheusLimits } from './prometheus-limits.js';
import type { Pipeline, PipelineInput } from './sdk-pipeline.js';
import type { InitTelemetryOptions, TelemetryConfig, TelemetryHandle } from './types.js';
import { reportWarning } from './warnings.js';

type Say = (message: string) => void;
type Observer = { stop(): void } | undefined;

let initPromise: Promise<TelemetryHandle | null> | undefined;
let current: TelemetryHandle | null = null;
/** Ends the running session: flush within the deadline, stop the observer, say what was lost. */
let endSession: (() => Promise<void>) | undefined;
let shutdownPromise: Promise<void> | undefined;

function publishOff(orchestrator: boolean): void {
  setTelemetryState({ metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator });
}

async function setUp(
  options: InitTelemetryOptions,
  prometheusLimits: PrometheusLimits,
): Promise<TelemetryHandle | null> {
  const orchestrator = options.serverType === 'orchestrator';
  const say: Say = (message) => reportWarning(options.onWarning, message);
  const off = (warning: string): null => {
    publishOff(orchestrator);
    if (warning !== '') say(warning);
    return null;
  };
  // What was started before a failure, to be undone by it.
  let pipeline: Pipeline | undefined;
  let observer: Observer;
  try {
    const config = readConfig(options.env ?? process.env, say);
    if (typeof config === 'string') return off(config);
    const groups = resolveSpanGroups(config.spanGroups);
    if (groups.unknown.length > 0) say(unknownGroupsWarning(groups.unknown));
    const { serverName } = options;
    const serviceName = config.serviceNamePerServer ? `${config.serviceName}/${serverName}` : config.serviceName;
    pipeline = await startPipelineFor(options, config, serviceName, prometheusLimits, say);
    const handle = handOut(pipeline, config, serviceName);
    if (config.observer && pipeline.meterProvider !== undefined) {
      observer = await startObserverOn(pipeline.meterProvider, serverName, say);
    }
    endSession = end.bind(undefined, pipeline, observer, config.shutdownTimeoutMillis, orchestrator, say);
    // A shutdownTelemetry() during setup (a SIGTERM at startup) releases the session; no handle.
    if (shutdownPromise !== undefined) return null;
    current = handle;
    publish(pipeline, config, groups.groups, orchestrator);
    return handle;
  } catch (error) {
    endSession = undefined;
    current = null;
    observer?.stop();
    void pipeline?.shutdown(0);
    return off(`telemetry is disabled: setup failed (${describeError(error)})`);
  }
}

/**
 * Step 1: the config, or the warning (`''` for none) of telemetry that stays off. A disabled
 * process reads only the switch and the names of the environment (for a misspelt switch).
 */
function readConfig(env: NodeJS.ProcessEnv, say: Say): TelemetryConfig | string {
  if (isSwitchedOff(env)) {
    const unknown = unknownVariablesWarning(env);
    if (unknown !== undefined) say(unknown);
    const theirs = (['metrics', 'trace'] as const).filter(isGloballyRegistered);
    const registered = theirs.map((kind) => (kind === 'metrics' ? 'MeterProvider' : 'TracerProvider'));
    if (registered.length === 0) return '';
    return (
      `NEMO_GYM_OTEL_ENABLED is off, so the Gym libraries record nothing, although a ${registered.join(' and a ')} ` +
      'is registered: set NEMO_GYM_OTEL_ENABLED=1 to record into it (it is reused), or pass meterProvider / ' +
      'tracerProvider in their options'
    );
  }
  const result = loadTelemetryConfig(env);
  for (const warning of result.warnings) say(warning);
  if (!result.ok) return `telemetry is disabled: ${result.error}`;
  // NEMO_GYM_OTEL_ENABLED is on, so only the standard off-switch can have said off.
  if (!result.config.enabled) return 'telemetry is off: OTEL_SDK_DISABLED=true wins over NEMO_GYM_OTEL_ENABLED';
  return Object.freeze({ ...result.config, runId: resolveRunId(result.config.runId, env) });
}

function unknownGroupsWarning(unknown: readonly string[]): string {
  const more = unknown.length > 10 ? ` and ${unknown.length - 10} more` : '';
  const names = unknown.slice(0, 10).map((name) => shown(name, 40));
  return `unknown span groups ignored: ${names.join(', ')}${more} (allowed: presets ${Object.keys(SPAN_GROUP_PRESETS).join(', ')}; groups ${SPAN_GROUPS.join(', ')})`;
}

/** Step 2: the SDK pipeline for this server, and a warning for each thing it could not apply. */
async function startPipelineFor(
  options: InitTelemetryOptions,
  config: TelemetryConfig,
  serviceName: string,
  prometheusLimits: PrometheusLimits,
  say: Say,
): Promise<Pipeline> {
  const { version } = createRequire(import.meta.url)('../package.json') as { version: string };
  // The dashboards group by Gym's keys: a caller adds to the resource, never renames the process.
  const attributes: Attributes = {
    ...options.resourceAttributes,
    [ATTR_VERSION]: version,
    [ATTR_SERVER_NAME]: options.serverName,
    [ATTR_SERVER_TYPE]: options.serverType,
    [ATTR_SERVICE_GROUP]: config.serviceName,
    [ATTR_RUN_ID]: config.runId,
    'service.name': serviceName,
  };
  const { startPipeline } = await import('./sdk-pipeline.js');
  const onExportFailure = exportFailureReporter(say);
  const pipeline = await startPipeline({ config, attributes, version, onExportFailure, prometheusLimits });
  const { problems, reused } = pipeline;
  if (problems.length > 0) {
    const signals = [...new Set(problems.map((problem) => problem.signal))];
    say(`${signals.join(' and ')} not exporting: ${problems.map((problem) => problem.reason).join('; ')}`);
  }
  if (reused.length > 0) {
    say(
      `${reused.join(' and ')} go to a provider registered before initTelemetry, with its own resource and ` +
        `exporters; not applied there: the Gym resource attributes (service.name "${serviceName}", nemo.run.id, ` +
        `nemo.gym.*) and the configured exporter (NEMO_GYM_OTEL_EXPORTER=${config.exporter})`,
    );
  }
  return pipeline;
}

/** One warning for the first failed export, and one more if the final flush at shutdown fails: that one means records are lost. */
function exportFailureReporter(say: Say): PipelineInput['onExportFailure'] {
  const reported = new Set<boolean>();
  return (signal, error, final) => {
    if (reported.has(final)) return;
    reported.add(final);
    say(
      final
        ? `${signal} export failed (${describeError(error)}) in the final flush at shutdown; what was recorded since the last successful export is lost`
        : `${signal} export failed (${describeError(error)}); telemetry carries on, and later export failures are not reported again`,
    );
  };
}

/** Step 3: the handle. */
function handOut(pipeline: Pipeline, config: TelemetryConfig, serviceName: string): TelemetryHandle {
  const { meter, tracer, metricsExporting, tracesExporting, prometheusEndpoint } = pipeline;
  return Object.freeze({
    meter,
    tracer,
    isExporting: metricsExporting || tracesExporting,
    metricsExporting,
    tracesExporting,
    config,
    serviceName,
    gymResourceApplied: pipeline.reused.length === 0,
    ...(prometheusEndpoint === undefined ? {} : { prometheusEndpoint }),
  });
}

/** Step 4: @gym/observer on the provider that receives this process's metrics, loaded only when it runs. */
async function startObserverOn(meterProvider: MeterProvider, serverName: string, say: Say): Promise<Observer> {
  try {
    const { startObserver } = await import('@gym/observer');
    return startObserver({ meterProvider, ...(SERVER_NAME_PATTERN.test(serverName) ? { serverName } : {}) });
  } catch (error) {
    say(`the observer did not start (${describeError(error)}); telemetry carries on without it`);
    return undefined;
  }
}

/** Step 5: what the libraries read: what exports, the span groups, the sandbox sampling. */
function publish(pipeline: Pipeline, config: TelemetryConfig, groups: ReadonlySet<SpanGroup>, orchestrator: boolean) {
  const { metricsExporting, tracesExporting } = pipeline;
  setTelemetryState({
    metricsExporting,
    tracesExporting,
    // The groups gate spans (only while traces export, see isSpanGroupEnabled) and also
    // group-scoped metrics, such as the sandbox lifecycle series, in a metrics-only process.
    spanGroups: tracesExporting || metricsExporting ? groups : [],
    orchestrator,
    sandboxSampleIntervalSeconds: tracesExporting ? config.sandboxResourceSampleIntervalSeconds : 0,
  });
}

/**
 * Sets up this process's telemetry from the environment, once: every later or concurrent call
 * returns the first call's promise. Resolves to a handle when telemetry is on, else `null`.
 * Rejects only on programming errors in `options`; a malformed variable or a failed setup
 * resolves `null` after one warning.
 */
export function initTelemetry(options: InitTelemetryOptions): Promise<TelemetryHandle | null> {
  let limits: PrometheusLimits;
  try {
    const { serverName, serverType } = options;
    if (serverName.trim() === '') {
      throw new TypeError(
        `initTelemetry: options.serverName must be a non-empty string; got ${describeValue(serverName)}`,
      );
    }
    if (!isServerType(serverType)) throw invalidChoice('initTelemetry: options.serverType', serverType, SERVER_TYPES);
    limits = checkPrometheusLimits(options.prometheus);
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
 * Flushes what `initTelemetry` built, then unregisters it and publishes "nothing exports", within
 * `NEMO_GYM_OTEL_SHUTDOWN_TIMEOUT_MILLIS` (one warning says what may be lost). Providers someone
 * else registered are left running. Idempotent; waits for a setup in progress; never rejects.
 */
export function shutdownTelemetry(): Promise<void> {
  if (initPromise === undefined) return Promise.resolve();
  const pending = initPromise;
  shutdownPromise ??= pending.then(() => {
    const ending = endSession;
    endSession = undefined;
    current = null;
    return ending?.();
  });
  return shutdownPromise;
}

async function end(pipeline: Pipeline, observer: Observer, deadline: number, orchestrator: boolean, say: Say) {
  publishOff(orchestrator);
  // The observer's last values go out with the final flush; then it stops.
  const { errors, timedOut } = await pipeline.shutdown(deadline);
  observer?.stop();
  const said = [
    timedOut
      ? `did not finish within ${deadline} ms (NEMO_GYM_OTEL_SHUTDOWN_TIMEOUT_MILLIS); records not exported by then may be lost`
      : undefined,
    errors.length > 0 ? `met ${errors.length} error(s): ${errors.map(describeError).join('; ')}` : undefined,
  ].filter((part) => part !== undefined);
  if (said.length > 0) say(`telemetry shutdown ${said.join('; it ')}`);
}

/** True when spans of `group` should be made: traces export and the published state lists the group. */
export function isSpanGroupEnabled(group: SpanGroup): boolean {
  const state = getTelemetryState();
  return state?.tracesExporting === true && state.spanGroups.has(group);
}

/** For this package's tests (the entry does not export it): shuts down, then forgets the setup and the published state. */
export async function resetTelemetryForTesting(): Promise<void> {
  await shutdownTelemetry();
  initPromise = undefined;
  shutdownPromise = undefined;
  endSession = undefined;
  current = null;
  setTelemetryState(undefined);
}
