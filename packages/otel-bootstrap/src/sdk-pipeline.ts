// The only module that loads the OpenTelemetry SDK (through `await import()`). Providers are built
// by hand, not through NodeSDK, so that NEMO_GYM_OTEL_EXPORTER picks the exporter, a taken port
// is a setup failure, and each global is registered only where nobody else did.

import type { Server } from 'node:http';
import * as api from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type {
  PushMetricExporter,
  ResourceMetrics,
  MeterProvider as SdkMeterProvider,
} from '@opentelemetry/sdk-metrics';
import type { TracerProvider as SdkTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace';
import { apiSlotVersion, registeredGlobal } from './otel-globals.js';
import type { PrometheusLimits } from './prometheus-limits.js';
import { startPrometheusServer } from './prometheus-server.js';
import { SCOPE_NAME, type TelemetryConfig } from './types.js';

export interface PipelineInput {
  readonly config: TelemetryConfig;
  /** The resource attributes, `service.name` included. */
  readonly attributes: api.Attributes;
  readonly version: string;
  /** Called with every export failure; `final` once shutdown began (the final flush). Never throws. */
  readonly onExportFailure: (signal: Signal, error: unknown, final: boolean) => void;
  readonly prometheusLimits: PrometheusLimits;
}

type Signal = 'metrics' | 'traces';
type Kind = 'metrics' | 'trace';
type ReportFailure = (signal: Signal, error: unknown) => void;
/** A signal that was asked for and does not export, and why. */
type RegistrationProblem = { readonly signal: Signal; readonly reason: string };
export type Pipeline = Awaited<ReturnType<typeof startPipeline>>;

/** What this pipeline built, per signal, and therefore owns. */
type OwnedMetrics = { provider: SdkMeterProvider; exporter?: SerializedExporter; server?: Server; endpoint?: string };
type OwnedTraces = {
  provider: SdkTracerProvider;
  contextManager?: api.ContextManager;
  propagator?: api.TextMapPropagator;
};
type Owned = { metrics?: OwnedMetrics; trace?: OwnedTraces };

/** Per global: its signal, the API's name for its provider, what the API hands out, how to (un)register. */
const GLOBALS = {
  metrics: {
    signal: 'metrics',
    provider: 'MeterProvider',
    handedOut: (): unknown => api.metrics.getMeterProvider(),
    register: (provider: object) => api.metrics.setGlobalMeterProvider(provider as api.MeterProvider),
    unregister: () => api.metrics.disable(),
  },
  trace: {
    signal: 'traces',
    provider: 'TracerProvider',
    handedOut: (): unknown => delegateOf(api.trace.getTracerProvider()),
    register: (provider: object) => api.trace.setGlobalTracerProvider(provider as api.TracerProvider),
    unregister: () => api.trace.disable(),
  },
} as const;

const noopTracerProvider = new api.ProxyTracerProvider();

/** The provider behind a trace proxy (duck-typed: the proxy may come from another copy of the API). */
function delegateOf(provider: unknown): unknown {
  const proxy = provider as Partial<Pick<api.ProxyTracerProvider, 'getDelegate'>> | undefined;
  return typeof proxy?.getDelegate === 'function' ? proxy.getDelegate() : provider;
}

/** A provider in the global slot: `visible` when this API hands it out, `hidden` when another API version owns the slot. */
type Existing = 'none' | 'visible' | 'hidden';
function existing(kind: Kind): Existing {
  const registered = delegateOf(registeredGlobal(kind));
  if (registered === undefined) return 'none';
  return GLOBALS[kind].handedOut() === registered ? 'visible' : 'hidden';
}

function problem(kind: Kind, why: 'hidden' | 'refused'): RegistrationProblem {
  const { signal, provider } = GLOBALS[kind];
  const version = apiSlotVersion();
  const reason =
    why === 'hidden'
      ? `a ${provider} is registered through another copy of @opentelemetry/api that this one cannot use`
      : `registering the ${provider} with @opentelemetry/api failed`;
  return { signal, reason: version ? `${reason} (the global slot belongs to @opentelemetry/api ${version})` : reason };
}

/** Whether a reused provider exports: all but the API's no-op one (by class name: it may come from another API copy). */
function reusedExports(kind: Kind): boolean {
  const provider = GLOBALS[kind].handedOut() as { constructor?: { name?: string } } | undefined;
  return provider?.constructor?.name !== `Noop${GLOBALS[kind].provider}`;
}

/**
 * Per signal: nothing when off, a provider someone else registered (reused, never shut down),
 * else ours. Rejects on a setup failure (a taken port), after undoing what it built.
 */
export async function startPipeline(input: PipelineInput) {
  // Reported failures are not reported again at shutdown; once shutdown began, a failure is the final flush's.
  const reported = new WeakSet<object>();
  let final = false;
  const onFailure: ReportFailure = (signal, error) => {
    if (typeof error === 'object' && error !== null) reported.add(error);
    input.onExportFailure(signal, error, final);
  };
  const problems: RegistrationProblem[] = [];
  const found = survey(input.config, problems);
  const owned = await build(input, found, onFailure);
  const to = { metrics: settle('metrics', found, owned, problems), trace: settle('trace', found, owned, problems) };
  if (owned.trace !== undefined) registerContext(owned.trace);
  let shutdownResult: ReturnType<typeof shutdownOwned> | undefined;
  return {
    ...handOut(input, owned, to),
    problems: problems as readonly RegistrationProblem[],
    /** See shutdownOwned; the first call's answer stands. */
    shutdown: (deadlineMillis: number) => {
      final = true;
      shutdownResult ??= shutdownOwned(owned, deadlineMillis, reported);
      return shutdownResult;
    },
  };
}

/** Step 1, per signal: what is registered before we build (nothing when the signal is off). */
function survey(config: TelemetryConfig, problems: RegistrationProblem[]): Record<Kind, Existing> {
  const found = (kind: Kind, enabled: boolean): Existing => {
    const registered = enabled ? existing(kind) : 'none';
    if (registered === 'hidden') problems.push(problem(kind, 'hidden'));
    return registered;
  };
  return { metrics: found('metrics', config.metricsEnabled), trace: found('trace', config.tracesEnabled) };
}

/** Step 2: our provider for each signal that is on, has an exporter, and found its slot free; undone on a failure. */
async function build(input: PipelineInput, found: Record<Kind, Existing>, onFailure: ReportFailure): Promise<Owned> {
  const { exporter, metricsEnabled, tracesEnabled } = input.config;
  const owned: Owned = {};
  const meters = metricsEnabled && found.metrics === 'none' && exporter !== 'none';
  const tracers = tracesEnabled && found.trace === 'none' && (exporter === 'otlp' || exporter === 'console');
  if (!meters && !tracers) return owned;
  try {
    const { defaultResource, detectResources, envDetector, hostDetector, resourceFromAttributes } = await import(
      '@opentelemetry/resources'
    );
    // OTEL_RESOURCE_ATTRIBUTES and the host come first; Gym's attributes win.
    const resource = defaultResource()
      .merge(detectResources({ detectors: [envDetector, hostDetector] }))
      .merge(resourceFromAttributes(input.attributes));
    // Settled now: the Prometheus serializer reads the attributes synchronously.
    await resource.waitForAsyncAttributes?.();
    if (meters) owned.metrics = await buildMeters(input, resource, onFailure);
    if (tracers) owned.trace = await buildTracers(input, resource, onFailure);
    return owned;
  } catch (error) {
    await shutdownOwned(owned, 0);
    throw error;
  }
}

type Receiver = 'ours' | 'reused' | 'none';

/**
 * Step 3, per signal: who receives it. Ours when the API takes and hands out ours; else a
 * provider someone registered while the SDK loaded (theirs wins when this API sees it), or
 * nobody (the API refused ours, or hides theirs: the problem is said). A discarded provider
 * had nothing recorded on it, so its shutdown runs in the background.
 */
function settle(kind: Kind, found: Record<Kind, Existing>, owned: Owned, problems: RegistrationProblem[]): Receiver {
  const ours = owned[kind];
  if (ours === undefined) return found[kind] === 'visible' ? 'reused' : 'none';
  const now = existing(kind);
  if (now === 'none' && GLOBALS[kind].register(ours.provider) && GLOBALS[kind].handedOut() === ours.provider) {
    return 'ours';
  }
  void shutdownOwned({ [kind]: ours } as Owned, 0);
  owned[kind] = undefined;
  if (now !== 'visible') problems.push(problem(kind, now === 'none' ? 'refused' : 'hidden'));
  return now === 'visible' ? 'reused' : 'none';
}

/** Step 4, with our TracerProvider registered: the context manager and propagator, each only where its slot is free. */
function registerContext(traces: OwnedTraces): void {
  const { contextManager, propagator } = traces;
  if (registeredGlobal('context') !== undefined || !api.context.setGlobalContextManager(contextManager!.enable())) {
    contextManager?.disable();
    delete traces.contextManager;
  }
  if (registeredGlobal('propagation') !== undefined || !api.propagation.setGlobalPropagator(propagator!)) {
    delete traces.propagator;
  }
}

/** Step 5: what exports, and the meter and tracer of whoever receives each signal. */
function handOut(input: PipelineInput, owned: Owned, to: Record<Kind, Receiver>) {
  const metricsExporting = to.metrics === 'ours' || (to.metrics === 'reused' && reusedExports('metrics'));
  const tracesExporting = to.trace === 'ours' || (to.trace === 'reused' && reusedExports('trace'));
  const meterProvider = metricsExporting ? (owned.metrics?.provider ?? api.metrics.getMeterProvider()) : undefined;
  const tracers = tracesExporting ? (owned.trace?.provider ?? api.trace.getTracerProvider()) : noopTracerProvider;
  return {
    meter: meterProvider?.getMeter(SCOPE_NAME, input.version) ?? api.createNoopMeter(),
    tracer: tracers.getTracer(SCOPE_NAME, input.version),
    metricsExporting,
    tracesExporting,
    meterProvider,
    prometheusEndpoint: owned.metrics?.endpoint,
    reused: (['metrics', 'trace'] as const).filter((kind) => to[kind] === 'reused').map((kind) => GLOBALS[kind].signal),
  };
}

async function buildMeters(input: PipelineInput, resource: Resource, onFailure: ReportFailure) {
  const { config } = input;
  const { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } = await import(
    '@opentelemetry/sdk-metrics'
  );
  if (config.exporter === 'prometheus') {
    const { PrometheusExporter } = await import('@opentelemetry/exporter-prometheus');
    const reader = new PrometheusExporter({ preventServerStart: true });
    const { server, endpoint } = await startPrometheusServer(reader, config, input.prometheusLimits);
    return { provider: new MeterProvider({ resource, readers: [reader] }), server, endpoint };
  }
  const url = config.otlpMetricsEndpoint;
  const pushExporter =
    config.exporter === 'console'
      ? new ConsoleMetricExporter()
      : new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter(url ? { url } : {});
  const exporter = serialize(pushExporter, (error) => onFailure('metrics', error));
  const reader = new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: config.metricExportIntervalMillis,
    exportTimeoutMillis: config.metricExportTimeoutMillis,
  });
  return { provider: new MeterProvider({ resource, readers: [reader] }), exporter };
}

/** The TracerProvider, with the AsyncLocalStorage context manager and W3C propagators that NodeSDK would use. */
async function buildTracers(input: PipelineInput, resource: Resource, onFailure: ReportFailure) {
  const { config } = input;
  const { BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor, TracerProvider } = await import(
    '@opentelemetry/sdk-trace'
  );
  const failed = (error: unknown) => onFailure('traces', error);
  const watch = (exporter: SpanExporter): SpanExporter => ({
    export: (spans, callback) => exporter.export(spans, watchResult(callback, failed)),
    shutdown: () => exporter.shutdown(),
    forceFlush: async () => exporter.forceFlush?.(),
  });
  const url = config.otlpTracesEndpoint;
  const spanProcessor =
    config.exporter === 'console'
      ? new SimpleSpanProcessor({ exporter: watch(new ConsoleSpanExporter()) })
      : new BatchSpanProcessor({
          exporter: watch(
            new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(url ? { url } : {}),
          ),
        });
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } = await import('@opentelemetry/core');
  return {
    provider: new TracerProvider({ resource, spanProcessors: [spanProcessor] }),
    contextManager: new AsyncLocalStorageContextManager(),
    propagator: new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  };
}

/** `callback`, plus a call to `onFailure` when the result is not a success (the SDK says failures only through `diag`). */
function watchResult(callback: (result: ExportResult) => void, onFailure: (error: unknown) => void) {
  return (result: ExportResult): void => {
    // ExportResultCode.SUCCESS is 0 (a const enum in @opentelemetry/core).
    if (result.code !== 0) onFailure(result.error ?? new Error('export failed'));
    callback(result);
  };
}

/** A push exporter whose exports never overlap; `busy` while one is under way. */
interface SerializedExporter extends PushMetricExporter {
  readonly busy: boolean;
}

/**
 * The exporter, reporting its failures, one export at a time: the periodic reader stops waiting
 * at its timeout while OTLP retries, and a retried export landing after a newer one would make a
 * cumulative counter go down. A collection that arrives meanwhile waits; a newer one replaces it
 * (cumulative: it carries all the older did).
 */
function serialize(exporter: PushMetricExporter, onFailure: (error: unknown) => void): SerializedExporter {
  type Job = { data: ResourceMetrics; callback: (result: ExportResult) => void };
  let running = false;
  let waiting: Job | undefined;
  const run = (job: Job): void => {
    running = true;
    exporter.export(job.data, (result) => {
      running = false;
      const next = waiting;
      waiting = undefined;
      if (next !== undefined) run(next);
      watchResult(job.callback, onFailure)(result);
    });
  };
  return {
    get busy() {
      return running;
    },
    export: (data, callback) => {
      if (!running) return run({ data, callback });
      // ExportResultCode.FAILED is 1; a superseded collection is not a collector failure.
      waiting?.callback({
        code: 1,
        error: new Error('superseded by a newer collection while an export was under way'),
      });
      waiting = { data, callback };
    },
    forceFlush: () => exporter.forceFlush(),
    shutdown: () => exporter.shutdown(),
    selectAggregationTemporality: exporter.selectAggregationTemporality?.bind(exporter),
    selectAggregation: exporter.selectAggregation?.bind(exporter),
  };
}

/** Resolves `true` after `millis` (a timer that never keeps the process alive), or `false` once `work` settles. */
function raceDeadline(work: Promise<unknown>, millis: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, millis, true).unref();
    void work.finally(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

/**
 * Flushes and shuts down every owned piece within `deadlineMillis` (0: do not wait), then, in
 * time or not, unregisters the globals still ours and closes the endpoint. Never rejects; failed
 * exports already reported (`reported`) are left out.
 */
async function shutdownOwned(owned: Owned, deadlineMillis: number, reported = new WeakSet<object>()) {
  const errors: unknown[] = [];
  const step = async (action: () => Promise<void>): Promise<void> => {
    try {
      await action();
    } catch (error) {
      // TracerProvider.forceFlush rejects with an array of its processors' errors.
      for (const one of Array.isArray(error) ? error : [error]) {
        if (typeof one !== 'object' || one === null || !reported.has(one)) errors.push(one);
      }
    }
  };
  const { metrics: meters, trace: traces } = owned;
  const work = Promise.all([
    (async () => {
      if (meters === undefined) return;
      // A reader's shutdown collects and exports (a forceFlush first would send every point
      // twice), but while an export is under way it only waits for it: then a flush goes first.
      if (meters.exporter?.busy) await step(() => meters.provider.forceFlush());
      await step(() => meters.provider.shutdown());
    })(),
    (async () => {
      if (traces === undefined) return;
      await step(() => traces.provider.forceFlush());
      await step(() => traces.provider.shutdown());
    })(),
  ]);
  const timedOut = deadlineMillis > 0 && (await raceDeadline(work, deadlineMillis));
  // A copy: steps that finish after the deadline add nothing to this report.
  const report = { errors: [...errors] as readonly unknown[], timedOut };
  // Every connection goes, idle or mid-request: a shutdown never waits for a client.
  meters?.server?.close();
  meters?.server?.closeAllConnections();
  for (const kind of ['metrics', 'trace'] as const) {
    const provider = owned[kind]?.provider;
    if (provider !== undefined && delegateOf(registeredGlobal(kind)) === provider) GLOBALS[kind].unregister();
  }
  const { contextManager, propagator } = traces ?? {};
  if (contextManager !== undefined && registeredGlobal('context') === contextManager) api.context.disable();
  if (propagator !== undefined && registeredGlobal('propagation') === propagator) api.propagation.disable();
  return report;
}
