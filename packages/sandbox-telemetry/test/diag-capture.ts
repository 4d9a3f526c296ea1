// Collects what the package writes through the OpenTelemetry diag API (a real DiagLogger
// registered globally), so tests can assert "logged once" on the output itself. Starting a
// capture also forgets what this package already reported in the process (kept in
// @gym/core's shared slot), so "once" is counted from the capture on, as in a new process.

import { sharedSlot } from '@gym/core';
import { type DiagLogger, DiagLogLevel, diag } from '@opentelemetry/api';

/** @gym/core's once-only reporting keeps `<package>\u0000<kind>` keys in this shared slot. */
const REPORTED_SLOT = '@gym/core/reported@1';

export interface DiagCapture {
  /** Warnings and errors written so far, each as one line. */
  readonly lines: string[];
  /** Unregisters the logger. */
  stop(): void;
}

/** Forgets every kind @gym/sandbox-telemetry reported so far in this process. */
export function forgetReported(): void {
  const reported = sharedSlot(REPORTED_SLOT, () => new Set<string>());
  for (const key of [...reported]) if (key.startsWith('@gym/sandbox-telemetry\u0000')) reported.delete(key);
}

export function captureDiag(): DiagCapture {
  forgetReported();
  const lines: string[] = [];
  const write = (...args: unknown[]) => {
    lines.push(args.map(String).join(' '));
  };
  const logger: DiagLogger = { error: write, warn: write, info: () => {}, debug: () => {}, verbose: () => {} };
  diag.setLogger(logger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  return { lines, stop: () => diag.disable() };
}
