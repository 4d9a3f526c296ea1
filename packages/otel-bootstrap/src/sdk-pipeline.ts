// The only module that touches the OpenTelemetry SDK, through `await import()`: a process with
// telemetry off never loads it. Providers are built by hand, not through NodeSDK, so that the
// exporter follows NEMO_GYM_OTEL_EXPORTER, a taken Prometheus port is a setup failure, and each
// global is registered only where nobody else did. A signal is "exporting" only when the API
// this package loads hands its provider out; a refused or hidden registration is said once.

import type { Server } from 'node:http';
import {
  type Attributes,
  type ContextManager,
  context,
  createNoopMeter,
  type MeterProvider,
  metrics,
  ProxyTracerProvider,
  propagation,
  type TextMapPropagator,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { MetricReader, PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';
import { apiSlotVersion, registeredGlobal } from './otel-globals.js';
import type { PrometheusLimits } from './prometheus-limits.js';
import { closePrometheusServer, startPrometheusServer } from './prometheus-server.js';
import { SCOPE_NAME } from './scope.js';
import type { TelemetryConfig } from './types.js';

/** The resource attribute of the service name (semantic conventions, stable). */
const ATTR_SERVICE_NAME = 'service.name';

/** What the pipeline is built from. */
export interface PipelineInput {
  readonly config: TelemetryConfig;
  readonly serviceName: string;
  readonly attributes: Attributes;
  readonly version: string;
  /** Called with every export failure; `final` once shutdown began (the final flush). Never throws. */
  readonly onExportFailure: (signal: Signal, error: unknown, final: boolean) => void;
  /** The Prometheus endpoint's client bounds, checked (see prometheus-limits.ts). */
  readonly prometheusLimits: PrometheusLimits;
}

type Signal = 'metrics' | 'traces';
type Kind = 'metrics' | 'trace';
const SIGNALS = { metrics: 'metrics', trace: 'traces' } as const;
const SIGNAL_NAMES = { metrics: 'MeterProvider', trace: 'TracerProvider' } as const;

/** What a bounded shutdown met: the errors of the steps that finished in time, and whether the deadline passed first. */
type ShutdownReport = { readonly errors: readonly unknown[]; readonly timedOut: boolean };

/** A signal that was asked for and does not export (a refused or hidden registration), and why. */
type RegistrationProblem = { readonly signal: Signal; readonly reason: string };

/** A running pipeline (see startPipeline). */
export type Pipeline = Awaited<ReturnType<typeof startPipeline>>;

/** The SDK objects this pipeline built and therefore owns. */
interface Owned {
  meterProvider?: { forceFlush(): Promise<void>; shutdown(): Promise<void> } & MeterProvider;
  /** The push exporter behind our periodic reader (see watchMetricExporter). */
  metricExporter?: SerializedExporter;
  tracerProvider?: { forceFlush(): Promise<void>; shutdown(): Promise<void> } & TracerProvider;
  prometheusServer?: Server;
  prometheusEndpoint?: string;
  contextManager?: ContextManager;
  propagator?: TextMapPropagator;
}

const noopTracerProvider = new ProxyTracerProvider();

/** A provider in the global slot: `visible` when this API hands it out, `hidden` when another API version owns the slot. */
type Existing = 'none' | 'visible' | 'hidden';
function existing(kind: Kind): Existing {
  const registered = registeredGlobal(kind);
  if (registered === undefined) return 'none';
  const handedOut = kind === 'metrics' ? metrics.getMeterProvider() : trace.getTracerProvider();
  return handedOut === registered ? 'visible' : 'hidden';
}

/** Why a signal does not export: its provider is `hidden` from this API, or was refused. */
function problem(kind: Kind, why: 'hidden' | 'refused'): RegistrationProblem {
  const version = apiSlotVersion();
  const owner = version === undefined ? '' : ` (the global slot belongs to @opentelemetry/api ${version})`;
  return {
    signal: SIGNALS[kind],
    reason:
      why === 'hidden'
        ? `a ${SIGNAL_NAMES[kind]} is registered through another copy of @opentelemetry/api that this one cannot use${owner}`
        : `registering the ${SIGNAL_NAMES[kind]} with @opentelemetry/api failed${owner}`,
  };
}

/** Whether a reused provider exports: all but the API's no-op one (by class name: it may come from another API copy). */
function reusedExports(kind: Kind): boolean {
  const provider = kind === 'metrics' ? metrics.getMeterProvider() : delegateOf(trace.getTracerProvider());
  const name = (provider as { constructor?: { name?: string } } | undefined)?.constructor?.name;
  return name !== (kind === 'metrics' ? 'NoopMeterProvider' : 'NoopTracerProvider');
}

/** Registers `provider` and checks the API hands it out. */
function register(kind: Kind, provider: MeterProvider | TracerProvider): boolean {
  if (kind === 'metrics') {
    return metrics.setGlobalMeterProvider(provider as MeterProvider) && existing('metrics') === 'visible';
  }
  return (
    trace.setGlobalTracerProvider(provider as TracerProvider) && delegateOf(trace.getTracerProvider()) === provider
  );
}

/** Step 1: per signal, what is there before we build: nothing (build ours), a visible provider (reuse it), or a hidden one. */
function survey(config: TelemetryConfig, problems: RegistrationProblem[]) {
  const metricsBefore = config.metricsEnabled ? existing('metrics') : 'none';
  const tracesBefore = config.tracesEnabled ? existing('trace') : 'none';
  if (metricsBefore === 'hidden') problems.push(problem('metrics', 'hidden'));
  if (tracesBefore === 'hidden') problems.push(problem('trace', 'hidden'));
  return {
    metricsBefore,
    tracesBefore,
    buildMetrics: config.metricsEnabled && metricsBefore === 'none' && config.exporter !== 'none',
    buildTraces:
      config.tracesEnabled && tracesBefore === 'none' && (config.exporter === 'otlp' || config.exporter === 'console'),
  };
}

/** Step 2: builds the providers, the endpoint and the trace context pieces asked for; undoes them all on a failure. */
async function build(input: PipelineInput, buildMetrics: boolean, buildTraces: boolean): Promise<Owned> {
  const owned: Owned = {};
  if (!buildMetrics && !buildTraces) return owned;
  try {
    const resource = await buildResource(input);
    if (buildMetrics) {
      const { reader, server, endpoint, exporter } = await buildMetricReader(input);
      Object.assign(owned, { prometheusServer: server, prometheusEndpoint: endpoint, metricExporter: exporter });
      const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
      owned.meterProvider = new MeterProvider({ resource, readers: [reader] });
    }
    if (buildTraces) {
      const { TracerProvider: SdkTracerProvider } = await import('@opentelemetry/sdk-trace');
      owned.tracerProvider = new SdkTracerProvider({ resource, spanProcessors: [await buildSpanProcessor(input)] });
      // The AsyncLocalStorage context manager, as NodeSDK uses.
      const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
      owned.contextManager = new AsyncLocalStorageContextManager();
      const { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } = await import(
        '@opentelemetry/core'
      );
      owned.propagator = new CompositePropagator({
        propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
      });
    }
    return owned;
  } catch (error) {
    await shutdownOwned(owned, 0);
    throw error;
  }
}

/**
 * Step 3, per signal: who receives it. Ours when the API takes and hands out ours; else a
 * provider someone registered while the SDK loaded (theirs wins when this API sees it), or
 * nobody (the API refused ours, or hides theirs: the problem is said). A discarded provider
 * had nothing recorded on it, so its shutdown runs in the background.
 */
function settle(
  kind: Kind,
  before: Existing,
  ours: MeterProvider | TracerProvider | undefined,
  problems: RegistrationProblem[],
  discard: () => void,
): 'ours' | 'reused' | 'none' {
  if (ours === undefined) return before === 'visible' ? 'reused' : 'none';
  const now = existing(kind);
  if (now === 'none' && register(kind, ours)) return 'ours';
  discard();
  if (now !== 'visible') problems.push(problem(kind, now === 'none' ? 'refused' : 'hidden'));
  return now === 'visible' ? 'reused' : 'none';
}

/** Step 4: the context manager and propagator, each only where its global slot is free. */
function registerContext(owned: Owned): void {
  const { contextManager, propagator } = owned;
  if (contextManager !== undefined) {
    if (registeredGlobal('context') !== undefined || !context.setGlobalContextManager(contextManager.enable())) {
      contextManager.disable();
      owned.contextManager = undefined;
    }
  }
  if (propagator !== undefined) {
    if (registeredGlobal('propagation') !== undefined || !propagation.setGlobalPropagator(propagator)) {
      owned.propagator = undefined;
    }
  }
}

/**
 * Builds and registers the pipeline `input.config` asks for: per signal, nothing when off, a
 * provider someone else registered (reused, never shut down), else ours. Rejects on a setup
 * failure (a taken port), after undoing what it built.
 */
export async function startPipeline(pipelineInput: PipelineInput) {
  // Failed exports, remembered so that shutdown does not report the same failure again. Once
  // shutdown began, a failure is the final flush's, whenever it arrives (`final` is set here).
  const exportErrors = new WeakSet<object>();
  let final = false;
  const input: PipelineInput = {
    ...pipelineInput,
    onExportFailure: (signal, error) => {
      if (typeof error === 'object' && error !== null) exportErrors.add(error);
      pipelineInput.onExportFailure(signal, error, final);
    },
  };
  const problems: RegistrationProblem[] = [];
  const { metricsBefore, tracesBefore, buildMetrics, buildTraces } = survey(input.config, problems);
  const owned = await build(input, buildMetrics, buildTraces);
  const { meterProvider: ourMeters, tracerProvider: ourTracers, prometheusServer } = owned;
  const metricsTo = settle('metrics', metricsBefore, ourMeters, problems, () => {
    void shutdownOwned({ meterProvider: ourMeters, prometheusServer }, 0);
    Object.assign(owned, { meterProvider: undefined, prometheusServer: undefined, prometheusEndpoint: undefined });
  });
  const tracesTo = settle('trace', tracesBefore, ourTracers, problems, () => {
    void shutdownOwned({ tracerProvider: ourTracers }, 0);
    Object.assign(owned, { tracerProvider: undefined, contextManager: undefined, propagator: undefined });
  });
  if (tracesTo === 'ours') registerContext(owned);
  const metricsExporting = metricsTo === 'ours' || (metricsTo === 'reused' && reusedExports('metrics'));
  const tracesExporting = tracesTo === 'ours' || (tracesTo === 'reused' && reusedExports('trace'));
  const reused = [...(metricsTo === 'reused' ? ['metrics'] : []), ...(tracesTo === 'reused' ? ['traces'] : [])];

  const meterProvider = metricsExporting ? (owned.meterProvider ?? metrics.getMeterProvider()) : undefined;
  const meter = meterProvider === undefined ? createNoopMeter() : meterProvider.getMeter(SCOPE_NAME, input.version);
  const tracer = (tracesExporting ? (owned.tracerProvider ?? trace.getTracerProvider()) : noopTracerProvider).getTracer(
    SCOPE_NAME,
    input.version,
  );
  let shutdownResult: Promise<ShutdownReport> | undefined;
  return {
    meter,
    tracer,
    metricsExporting,
    tracesExporting,
    meterProvider,
    prometheusEndpoint: owned.prometheusEndpoint,
    problems: problems as readonly RegistrationProblem[],
    reused: reused as readonly Signal[],
    /** See shutdownOwned; the first call's answer stands. */
    shutdown: (deadlineMillis: number): Promise<ShutdownReport> => {
      final = true;
      shutdownResult ??= shutdownOwned(owned, deadlineMillis, exportErrors);
      return shutdownResult;
    },
  };
}

async function buildResource(input: PipelineInput): Promise<Resource> {
  const { defaultResource, detectResources, envDetector, hostDetector, resourceFromAttributes } = await import(
    '@opentelemetry/resources'
  );
  // OTEL_RESOURCE_ATTRIBUTES and the host come first; Gym's attributes and service.name win.
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector, hostDetector] }))
    .merge(resourceFromAttributes({ ...input.attributes, [ATTR_SERVICE_NAME]: input.serviceName }));
  // Settled now: the Prometheus serializer reads the attributes synchronously.
  await resource.waitForAsyncAttributes?.();
  return resource;
}

/** `callback`, plus a call to `onFailure` when the result is not a success. */
function watchResult(
  callback: (result: ExportResult) => void,
  onFailure: (error: unknown) => void,
): (result: ExportResult) => void {
  return (result) => {
    // ExportResultCode.SUCCESS is 0 (a const enum in @opentelemetry/core).
    if (result.code !== 0) onFailure(result.error ?? new Error('export failed'));
    callback(result);
  };
}

/** A push exporter whose exports never overlap; `busy` while one is under way. */
export interface SerializedExporter extends PushMetricExporter {
  readonly busy: boolean;
}

/**
 * The exporter, reporting its failures (the SDK says them only through `diag`), one export at a
 * time: the periodic reader stops waiting at its timeout while OTLP retries, and a retried
 * export landing after a newer one would make a cumulative counter go down. A collection that
 * arrives meanwhile waits; a newer one replaces it (cumulative: it carries all the older did).
 */
function watchMetricExporter(exporter: PushMetricExporter, onFailure: (error: unknown) => void): SerializedExporter {
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
  const watched: SerializedExporter = {
    get busy() {
      return running;
    },
    export: (data, callback) => {
      if (!running) {
        run({ data, callback });
        return;
      }
      // ExportResultCode.FAILED is 1; a superseded collection is not a collector failure.
      waiting?.callback({
        code: 1,
        error: new Error('superseded by a newer collection while an export was under way'),
      });
      waiting = { data, callback };
    },
    forceFlush: () => exporter.forceFlush(),
    shutdown: () => exporter.shutdown(),
  };
  if (exporter.selectAggregationTemporality !== undefined) {
    watched.selectAggregationTemporality = exporter.selectAggregationTemporality.bind(exporter);
  }
  if (exporter.selectAggregation !== undefined) watched.selectAggregation = exporter.selectAggregation.bind(exporter);
  return watched;
}

function watchSpanExporter(exporter: SpanExporter, onFailure: (error: unknown) => void): SpanExporter {
  const watched: SpanExporter = {
    export: (spans, callback) => exporter.export(spans, watchResult(callback, onFailure)),
    shutdown: () => exporter.shutdown(),
  };
  if (exporter.forceFlush !== undefined) watched.forceFlush = exporter.forceFlush.bind(exporter);
  return watched;
}

async function buildMetricReader(
  input: PipelineInput,
): Promise<{ reader: MetricReader; server?: Server; endpoint?: string; exporter?: SerializedExporter }> {
  const { config } = input;
  const { ConsoleMetricExporter, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
  const periodic = {
    exportIntervalMillis: config.metricExportIntervalMillis,
    exportTimeoutMillis: config.metricExportTimeoutMillis,
  };
  if (config.exporter === 'prometheus') {
    const { PrometheusExporter } = await import('@opentelemetry/exporter-prometheus');
    const exporter = new PrometheusExporter({ preventServerStart: true });
    const { server, endpoint } = await startPrometheusServer(
      exporter,
      config.prometheusHost,
      config.prometheusPort,
      input.prometheusLimits,
    );
    return { reader: exporter, server, endpoint };
  }
  const onFailure = (error: unknown) => input.onExportFailure('metrics', error, false);
  if (config.exporter === 'console') {
    const exporter = watchMetricExporter(new ConsoleMetricExporter(), onFailure);
    return { reader: new PeriodicExportingMetricReader({ exporter, ...periodic }), exporter };
  }
  const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-proto');
  const url = config.otlpMetricsEndpoint;
  const exporter = watchMetricExporter(new OTLPMetricExporter(url === undefined ? {} : { url }), onFailure);
  return { reader: new PeriodicExportingMetricReader({ exporter, ...periodic }), exporter };
}

async function buildSpanProcessor(input: PipelineInput): Promise<SpanProcessor> {
  const { config } = input;
  const { BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace');
  const onFailure = (error: unknown) => input.onExportFailure('traces', error, false);
  if (config.exporter === 'console') {
    return new SimpleSpanProcessor({ exporter: watchSpanExporter(new ConsoleSpanExporter(), onFailure) });
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  const url = config.otlpTracesEndpoint;
  return new BatchSpanProcessor({
    exporter: watchSpanExporter(new OTLPTraceExporter(url === undefined ? {} : { url }), onFailure),
  });
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
async function shutdownOwned(
  owned: Owned,
  deadlineMillis: number,
  reported: WeakSet<object> = new WeakSet(),
): Promise<ShutdownReport> {
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
  const { meterProvider, tracerProvider, prometheusServer } = owned;
  const work = Promise.all([
    // A reader's shutdown collects and exports (a forceFlush first would send every point
    // twice), but while an export is under way it only waits for it: then a flush goes first.
    meterProvider === undefined
      ? undefined
      : (async () => {
          if (owned.metricExporter?.busy === true) await step(() => meterProvider.forceFlush());
          await step(() => meterProvider.shutdown());
        })(),
    (async () => {
      if (tracerProvider !== undefined) {
        await step(() => tracerProvider.forceFlush());
        await step(() => tracerProvider.shutdown());
      }
    })(),
  ]);
  const timedOut = deadlineMillis > 0 ? await raceDeadline(work, deadlineMillis) : false;
  // A copy: steps that finish after the deadline add nothing to this report.
  const report: ShutdownReport = { errors: [...errors], timedOut };
  if (prometheusServer !== undefined) closePrometheusServer(prometheusServer);
  if (meterProvider !== undefined && registeredGlobal('metrics') === meterProvider) metrics.disable();
  if (tracerProvider !== undefined && delegateOf(registeredGlobal('trace')) === tracerProvider) trace.disable();
  if (owned.contextManager !== undefined && registeredGlobal('context') === owned.contextManager) context.disable();
  if (owned.propagator !== undefined && registeredGlobal('propagation') === owned.propagator) propagation.disable();
  return report;
}

/** The real provider behind the API's global proxy (duck-typed: the proxy may come from another copy of the API). */
function delegateOf(provider: unknown): unknown {
  const proxy = provider as Partial<Pick<ProxyTracerProvider, 'getDelegate'>> | undefined;
  return typeof proxy?.getDelegate === 'function' ? proxy.getDelegate() : provider;
}
