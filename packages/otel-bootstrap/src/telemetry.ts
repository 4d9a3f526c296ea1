// One process, one telemetry setup. The first call to initTelemetry decides for the life of
// the process (even when it decides "off"), concurrent callers share that one setup, and
// nothing here ever throws into a server because of telemetry: a bad environment or a
// failed setup turns telemetry off with one warning and the server carries on. This module
// holds the process-wide state; it is the only place in gym-telemetry that does.

import {
  isServerType,
  resolveSpanGroups,
  SERVER_TYPES,
  type ServerType,
  SPAN_GROUP_PRESETS,
  SPAN_GROUPS,
} from '@gym/constants';
import { setTelemetryState } from '@gym/core';
import { loadTelemetryConfig, readEnabledSwitch } from './config.js';
import { gymResourceAttributes, serviceNameOf } from './gym-resource.js';
import { packageVersion } from './package-version.js';
import { resolveRunId } from './run-id.js';
import type { Pipeline } from './sdk-pipeline.js';
import type { InitTelemetryOptions, TelemetryHandle, TelemetryWarningHandler } from './types.js';
import { reportWarning } from './warnings.js';

interface Session {
  readonly pipeline: Pipeline;
  readonly orchestrator: boolean;
  readonly onWarning: TelemetryWarningHandler | undefined;
}

/** The first setup's promise; every later call returns it. */
let initPromise: Promise<TelemetryHandle | null> | undefined;
/** The handle once setup finished with telemetry on; `null` otherwise. */
let current: TelemetryHandle | null = null;
let session: Session | undefined;
let shutdownPromise: Promise<void> | undefined;

/** Validated options; programming errors fail fast, before any telemetry decision. */
function checkOptions(options: InitTelemetryOptions): InitTelemetryOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`initTelemetry: options must be an object, got ${options === null ? 'null' : typeof options}`);
  }
  const { serverName, serverType, resourceAttributes, env, onWarning } = options;
  if (typeof serverName !== 'string' || serverName.trim() === '') {
    throw new TypeError(
      `initTelemetry: options.serverName must be a non-empty string, got ${JSON.stringify(serverName) ?? 'undefined'}`,
    );
  }
  if (!isServerType(serverType)) {
    throw new RangeError(
      `initTelemetry: options.serverType=${JSON.stringify(serverType) ?? 'undefined'} is not one of ${SERVER_TYPES.join(', ')}`,
    );
  }
  if (resourceAttributes !== undefined && (typeof resourceAttributes !== 'object' || resourceAttributes === null)) {
    throw new TypeError('initTelemetry: options.resourceAttributes must be an object of attributes when given');
  }
  if (env !== undefined && (typeof env !== 'object' || env === null)) {
    throw new TypeError('initTelemetry: options.env must be an environment object when given');
  }
  if (onWarning !== undefined && typeof onWarning !== 'function') {
    throw new TypeError('initTelemetry: options.onWarning must be a function when given');
  }
  return options;
}

/** Publishes "nothing exports" (span groups shut) for libraries to read. */
function publishOff(orchestrator: boolean): void {
  setTelemetryState({ metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator });
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

async function setUp(options: InitTelemetryOptions): Promise<TelemetryHandle | null> {
  const orchestrator = options.serverType === 'orchestrator';
  const env = options.env ?? process.env;
  const { onWarning } = options;
  try {
    // The whole cost of a disabled process: one env read. No zod, no SDK.
    if (readEnabledSwitch(env) === 'off') {
      publishOff(orchestrator);
      return null;
    }
    const result = loadTelemetryConfig(env);
    if (!result.ok) {
      publishOff(orchestrator);
      reportWarning(onWarning, `telemetry is disabled: ${result.error}`);
      return null;
    }
    const config = Object.freeze({ ...result.config, runId: resolveRunId(result.config.runId, env) });
    const groups = resolveSpanGroups(config.spanGroups);
    if (groups.unknown.length > 0) {
      reportWarning(
        onWarning,
        `unknown span groups ignored: ${groups.unknown.join(', ')} (allowed: presets ${Object.keys(SPAN_GROUP_PRESETS).join(', ')}; groups ${SPAN_GROUPS.join(', ')})`,
      );
    }
    const serviceName = serviceNameOf(config, options.serverName);
    const version = packageVersion();
    const attributes = gymResourceAttributes(
      {
        serviceGroup: config.serviceName,
        serverName: options.serverName,
        serverType: options.serverType as ServerType,
        runId: config.runId,
        version,
      },
      options.resourceAttributes,
    );
    const { startPipeline } = await import('./sdk-pipeline.js');
    const pipeline = await startPipeline({ config, serviceName, attributes, version });
    const handle: TelemetryHandle = Object.freeze({
      meter: pipeline.meter,
      tracer: pipeline.tracer,
      isExporting: pipeline.metricsExporting || pipeline.tracesExporting,
      metricsExporting: pipeline.metricsExporting,
      tracesExporting: pipeline.tracesExporting,
      config,
      serviceName,
      ...(pipeline.prometheusEndpoint === undefined ? {} : { prometheusEndpoint: pipeline.prometheusEndpoint }),
    });
    session = { pipeline, orchestrator, onWarning };
    current = handle;
    setTelemetryState({
      metricsExporting: pipeline.metricsExporting,
      tracesExporting: pipeline.tracesExporting,
      // Span groups gate spans; with no trace export every gate stays shut (off is free).
      spanGroups: pipeline.tracesExporting ? groups.groups : [],
      orchestrator,
      sandboxSampleIntervalSeconds: pipeline.tracesExporting ? config.sandboxResourceSampleIntervalSeconds : 0,
    });
    return handle;
  } catch (error) {
    publishOff(orchestrator);
    reportWarning(onWarning, `telemetry is disabled: setup failed (${describeError(error)})`);
    return null;
  }
}

/**
 * Sets up this process's telemetry from the environment, once. The first call decides;
 * every later or concurrent call returns the same promise, whatever its options (even when
 * the first answer was `null`, and even after the environment changed).
 *
 * Resolves to a {@link TelemetryHandle} when `NEMO_GYM_OTEL_ENABLED` is on, else `null`.
 * Never rejects because of telemetry: a malformed variable or a failed setup (a Prometheus
 * port in use, a broken SDK) resolves to `null` after one warning through
 * `options.onWarning` (default `process.emitWarning`). It rejects only on programming
 * errors in `options` (a `TypeError` / `RangeError` naming the field).
 *
 * Service name `<OTEL_SERVICE_NAME>/<serverName>` (or the bare name with
 * `NEMO_GYM_OTEL_SERVICE_NAME_PER_SERVER=0`); resource attributes: `nemo.gym.version`,
 * `nemo.gym.server.name`, `nemo.gym.server.type`, `nemo.gym.service_group`, `nemo.run.id`,
 * over the caller's. A MeterProvider or TracerProvider that someone else registered is
 * reused and never shut down. Publishes the process state (`setTelemetryState`) for the
 * library packages. After {@link shutdownTelemetry}, resolves to `null`.
 */
export function initTelemetry(options: InitTelemetryOptions): Promise<TelemetryHandle | null> {
  try {
    checkOptions(options);
  } catch (error) {
    return Promise.reject(error);
  }
  if (shutdownPromise !== undefined) return Promise.resolve(null);
  initPromise ??= setUp(options);
  return initPromise;
}

/** The handle of a finished, enabled setup; `null` before, when disabled, and after shutdown. */
export function getTelemetry(): TelemetryHandle | null {
  return current;
}

/**
 * Flushes (forceFlush, then shutdown) what `initTelemetry` built, so everything recorded
 * before the call is exported, then unregisters it and publishes "nothing exports".
 * Providers registered by someone else are left running. Idempotent (later calls return
 * the same promise); a no-op before any `initTelemetry`; waits for a setup in progress.
 * Never rejects: provider errors are reported once through the warning handler.
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
    const errors = await ending.pipeline.shutdown();
    if (errors.length > 0) {
      reportWarning(
        ending.onWarning,
        `telemetry shutdown met ${errors.length} error(s); what could be flushed was: ${errors.map(describeError).join('; ')}`,
      );
    }
  })().catch(() => {
    // Unreachable (setUp and pipeline.shutdown never reject); shutdown must not throw regardless.
  });
  return shutdownPromise;
}

/**
 * TEST ONLY. Shuts telemetry down (as {@link shutdownTelemetry}), then forgets the setup
 * and clears the published telemetry state, so the next `initTelemetry` decides afresh.
 * Providers registered by someone else are not touched. Never call it in a server.
 */
export async function resetTelemetryForTesting(): Promise<void> {
  await shutdownTelemetry();
  initPromise = undefined;
  shutdownPromise = undefined;
  session = undefined;
  current = null;
  setTelemetryState(undefined);
}
