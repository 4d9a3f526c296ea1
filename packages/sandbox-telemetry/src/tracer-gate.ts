// The gate every record passes first. It answers "is there a tracer to write to?" before
// anything is built: with nothing exporting, the answer costs two reads of the shared
// telemetry state and no allocation, and callers return before touching their inputs.

import { currentSpanGroups, isTracesExporting } from '@gym/core';
import { ProxyTracerProvider, type Tracer, type TracerProvider, trace } from '@opentelemetry/api';
import type { SandboxTelemetryOptions } from './types.js';

/** Instrumentation scope name of every record. */
export const TRACER_NAME = '@gym/sandbox-telemetry';

const tracers = new WeakMap<TracerProvider, Tracer>();

function tracerOf(provider: TracerProvider): Tracer {
  let tracer = tracers.get(provider);
  if (tracer === undefined) {
    tracer = provider.getTracer(TRACER_NAME);
    tracers.set(provider, tracer);
  }
  return tracer;
}

/**
 * The tracer to write sandbox records with, or `undefined` when nothing would be exported:
 * the injected tracer, else the injected provider's, else, when traces are really exporting
 * and the `sandbox` span group is on, the global provider's. Cached per provider; the
 * global one is looked through to its delegate so a re-registered SDK gets a fresh tracer.
 */
export function sandboxTracer(options: SandboxTelemetryOptions | undefined): Tracer | undefined {
  if (options?.tracer !== undefined) return options.tracer;
  if (options?.tracerProvider !== undefined) return tracerOf(options.tracerProvider);
  if (!isTracesExporting() || !currentSpanGroups().has('sandbox')) return undefined;
  let provider = trace.getTracerProvider();
  if (provider instanceof ProxyTracerProvider) provider = provider.getDelegate();
  return tracerOf(provider);
}
