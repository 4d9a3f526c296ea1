// Once-only reporting, one policy for every package. Telemetry never throws into the program it
// observes; it says so once through `diag.warn` and carries on. "Once" per kind of trouble,
// per process (shared by every copy of every package), because a broken meter fails on every
// call and a log line per call would turn a telemetry problem into an outage of the log
// pipeline. A logger that throws is one more thing to survive.
//
// Reporting is not caching: a caller that hit a failing meter reports it here and tries
// again on its next call (see instrument-source.ts); only the message is once.

import { diag } from '@opentelemetry/api';
import { describeError } from './describe-value.js';
import { sharedSlot } from './shared-slot.js';

const reported = sharedSlot('@gym/core/reported@1', () => new Set<string>());

/** Reports trouble once per kind, through `diag.warn`, with a fixed prefix naming the package. */
export interface Reporter {
  /**
   * Writes `message` (built only the first time, when a function) as one `diag.warn` line the
   * first time `kind` is seen by this reporter's package in this process. `error`, when given,
   * is appended as one short line. Never throws.
   */
  warnOnce(kind: string, message: string | (() => string), error?: unknown): void;
  /** Whether `kind` was already reported by this package in this process. */
  hasReported(kind: string): boolean;
}

/** The reporter of the package named `packageName` (e.g. `@gym/metrics`). */
export function createReporter(packageName: string): Reporter {
  const prefix = `${packageName}:`;
  return {
    warnOnce(kind, message, error) {
      const key = `${packageName}\u0000${kind}`;
      if (reported.has(key)) return;
      reported.add(key);
      try {
        const text = typeof message === 'function' ? message() : message;
        diag.warn(error === undefined ? `${prefix} ${text}` : `${prefix} ${text}: ${describeError(error)}`);
      } catch {
        // A throwing logger (or message builder) must not reach the caller.
      }
    },
    hasReported(kind) {
      return reported.has(`${packageName}\u0000${kind}`);
    },
  };
}
