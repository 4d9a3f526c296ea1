// Operator messages (malformed environment, a setup that failed, unknown span groups) go
// to `process.emitWarning` by default: a server whose telemetry was asked for and is off
// must say so where an operator looks (stderr), and `diag` is silent unless someone set a
// diag logger. The console API is never used. Callers may route the messages elsewhere.

import type { TelemetryWarningHandler } from './types.js';

/** The `code` of every emitted warning, so it can be filtered (`process.on('warning')`). */
export const WARNING_CODE = 'GYM_TELEMETRY' as const;

/**
 * Sends `message`, prefixed, to `handler` or as a Node process warning (type
 * `GymTelemetryWarning`). A handler that throws is ignored: reporting a telemetry problem
 * must not become a new problem.
 */
export function reportWarning(handler: TelemetryWarningHandler | undefined, message: string): void {
  const text = `@gym/otel-bootstrap: ${message}`;
  try {
    if (handler === undefined) process.emitWarning(text, { type: 'GymTelemetryWarning', code: WARNING_CODE });
    else handler(text);
  } catch {
    // The report is best effort.
  }
}
