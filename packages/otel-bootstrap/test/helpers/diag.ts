// The test kit's diag capture, registered through the API copy the bootstrap loads (1.10).
// In this repository the kit resolves the libraries' API (1.9): a diag logger registered
// through it would claim the global slot for 1.9, and the bootstrap's 1.10 registrations
// would then be refused ("All API registration versions must match").

import { DiagCapture } from '@gym/test-kit';
import { DiagLogLevel, diag } from '@opentelemetry/api';

/** Registers a fresh capturing logger at every level. */
export function captureDiag(logLevel: DiagLogLevel = DiagLogLevel.ALL): DiagCapture {
  const logger = new DiagCapture();
  diag.setLogger(logger, { logLevel, suppressOverrideMessage: true });
  return logger;
}

/** Unregisters the global diag logger (a silent one first: `disable` logs through the old one). */
export function resetDiag(): void {
  captureDiag(DiagLogLevel.NONE);
  diag.disable();
}
