// The gate every record passes first. It answers "is there a tracer to write to?" before
// anything is built: with nothing injected and nothing exporting, the answer costs one read
// of the shared telemetry state and no allocation, and callers return before touching their
// inputs. Resolution itself is @gym/core's (injected provider, else the global provider while
// traces export; never throws: a failure is reported once and retried next call).

import { currentSpanGroups, isTracesExporting } from '@gym/core';
import { resolveTracer } from '@gym/core/internal';
import { type Context, context, type Tracer } from '@opentelemetry/api';
import { reporter, SCOPE } from './scope.js';
import type { SandboxTelemetryOptions } from './types.js';

/**
 * The tracer to write sandbox records with, or `undefined` when nothing would be exported:
 * the injected provider's, whatever the span groups (the caller said where); else, when
 * traces really export and the `sandbox` span group is on, the global provider's.
 */
export function sandboxTracer(options: SandboxTelemetryOptions | undefined): Tracer | undefined {
  if (options?.tracerProvider == null && (!isTracesExporting() || !currentSpanGroups().has('sandbox'))) {
    return undefined;
  }
  return resolveTracer(options, SCOPE, reporter);
}

/** The parent of a record: `explicit` when given, else the active context. */
export function parentContext(explicit: Context | undefined): Context {
  return explicit ?? context.active();
}
