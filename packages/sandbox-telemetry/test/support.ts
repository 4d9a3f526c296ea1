// Sandbox-only test support. The generic harnesses (spans, diag capture) come from @gym/test-kit.

import { sharedSlot } from '@gym/core/internal';
import { captureDiag, type DiagCapture } from '@gym/test-kit';
import { expect } from '@jest/globals';
import type { Tracer, TracerProvider } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';

/** @gym/core's once-only reporting keeps `<package>\u0000<kind>` keys in this shared slot. */
const REPORTED_SLOT = '@gym/core/reported@1';

/** Forgets every kind @gym/sandbox-telemetry reported so far in this process. */
export function forgetReported(): void {
  const reported = sharedSlot(REPORTED_SLOT, () => new Set<string>());
  for (const key of [...reported]) if (key.startsWith('@gym/sandbox-telemetry\u0000')) reported.delete(key);
}

/**
 * Registers a capturing diag logger after forgetting what this package already reported, so
 * "logged once" is counted from the capture on, as in a new process.
 */
export function captureSandboxDiag(): DiagCapture {
  forgetReported();
  return captureDiag();
}

/** Every attribute key starts with the sandbox prefix and every value is a string, number or boolean. */
export function expectSandboxAttributes(span: ReadableSpan): void {
  const bad = Object.entries(span.attributes).filter(
    ([key, value]) => !key.startsWith('nemo.gym.sandbox.') || !['string', 'number', 'boolean'].includes(typeof value),
  );
  expect(bad).toEqual([]);
}

/** A TracerProvider that hands out `tracer` (the only way to inject one: options take providers). */
export function providerOf(tracer: Tracer): TracerProvider {
  return { getTracer: () => tracer };
}
