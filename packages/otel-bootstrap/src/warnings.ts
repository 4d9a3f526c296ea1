// Operator messages go to `process.emitWarning` by default (stderr, where an operator looks;
// `diag` is silent unless someone set a logger), never to the console API.

import type { TelemetryWarningHandler } from './types.js';

/** The `code` of every emitted warning, so it can be filtered (`process.on('warning')`). */
export const WARNING_CODE = 'GYM_TELEMETRY' as const;

/** Sends `message`, prefixed, to `handler` or as a `GymTelemetryWarning`; a handler that throws is ignored. */
export function reportWarning(handler: TelemetryWarningHandler | undefined, message: string): void {
  const text = `@gym/otel-bootstrap: ${message}`;
  try {
    if (handler === undefined) process.emitWarning(text, { type: 'GymTelemetryWarning', code: WARNING_CODE });
    else handler(text);
  } catch {}
}
