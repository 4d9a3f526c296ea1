// The gate every record passes first. It answers "is there a tracer to write to?" before
// anything is built: with nothing injected and nothing exporting, the answer costs one read
// of the shared telemetry state and no allocation, and callers return before touching their
// inputs. Resolution itself is @gym/core's (injected tracer → injected provider → the global
// provider while traces export; never throws, a failure is reported once and retried).

import { currentSpanGroups, isTracesExporting, resolveTracer, type TracerSourceOptions } from '@gym/core';
import { type Context, context, ROOT_CONTEXT, type Tracer } from '@opentelemetry/api';
import { injectedSource } from './own-data.js';
import { reporter, SCOPE } from './report.js';
import type { SandboxTelemetryOptions } from './types.js';

/**
 * The tracer to write sandbox records with, or `undefined` when nothing would be exported:
 * the injected tracer, else the injected provider's, whatever the span groups (the caller
 * said where); else, when traces are really exporting and the `sandbox` span group is on,
 * the global provider's. Options are read from their own properties; a getter that throws is
 * reported once and treated as unset. Never throws.
 */
export function sandboxTracer(options: SandboxTelemetryOptions | null | undefined): Tracer | undefined {
  const source = injectedSource(options, 'tracer', 'tracerProvider') as TracerSourceOptions | undefined;
  if (source === undefined && (!isTracesExporting() || !currentSpanGroups().has('sandbox'))) return undefined;
  return resolveTracer(source, SCOPE, reporter);
}

/**
 * The parent of a record: `explicit` when it is a context, else the active one. A context
 * manager that throws is reported once and the record gets no parent. Never throws.
 */
export function parentContext(explicit: unknown): Context {
  if (typeof explicit === 'object' && explicit !== null) return explicit as Context;
  try {
    return context.active();
  } catch (error) {
    reporter.warnOnce('context', 'reading the active context threw; the record has no parent', error);
    return ROOT_CONTEXT;
  }
}
