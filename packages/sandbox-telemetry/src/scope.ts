// The package's instrumentation scope, its once-only reporter (@gym/core's: one `diag.warn` per
// kind of trouble per process) and the gate every record passes before it reads any input.

import { currentSpanGroups, isTracesExporting } from '@gym/core';
import { createReporter, resolveTracer } from '@gym/core/internal';
import type { Tracer } from '@opentelemetry/api';
import type { SandboxTelemetryOptions } from './types.js';

export const SCOPE = Object.freeze({ name: '@gym/sandbox-telemetry' });

export const reporter = createReporter(SCOPE.name);

/** Whether the `sandbox` span group is on: it gates the lifecycle metrics and global records alike. */
export function sandboxGroupOn(): boolean {
  return currentSpanGroups().has('sandbox');
}

/**
 * The tracer of a record, or `undefined` when nothing would be exported: an injected provider
 * is used whatever the span groups (the caller said where); the global one only while traces
 * export and the `sandbox` group is on. Off, this is one read of the shared state.
 */
export function sandboxTracer(options: SandboxTelemetryOptions | undefined): Tracer | undefined {
  if (options?.tracerProvider == null && (!isTracesExporting() || !sandboxGroupOn())) return undefined;
  return resolveTracer(options, SCOPE, reporter);
}
