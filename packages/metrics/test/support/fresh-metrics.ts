// Loads a fresh copy of @gym/metrics (and its dependencies) for one test, after putting the
// process-wide state back to "a new process": the verify tally, the orchestrator declaration
// and what @gym/metrics already reported. That state lives in @gym/core's shared slots (so
// that two copies of the package agree), not in module state, so a fresh module alone would
// not reset it; the tests reset it through the shared global, as a second process would
// start it. There is no test-only reset in the package's public API.

import { sharedSlot } from '@gym/core/internal';
import { jest } from '@jest/globals';
import type { Meter, MeterProvider } from '@opentelemetry/api';
import {
  ORCHESTRATOR_SLOT,
  type OrchestratorDeclaration,
  VERIFY_TALLY_SLOT,
  type VerifyTally,
} from '../../src/gym-metrics.js';

/** The public surface of @gym/metrics. */
export type MetricsModule = typeof import('../../src/index.js');

/** @gym/core's once-only reporting keeps `<package>\u0000<kind>` keys in this shared slot. */
const REPORTED_SLOT = '@gym/core/reported@1';

/** Puts the shared state of @gym/metrics back to what a new process starts with. */
export function resetSharedState(): void {
  const tally = sharedSlot<VerifyTally>(VERIFY_TALLY_SLOT, () => ({ calls: 0, completed: 0 }));
  tally.calls = 0;
  tally.completed = 0;
  sharedSlot<OrchestratorDeclaration>(ORCHESTRATOR_SLOT, () => ({ declared: undefined })).declared = undefined;
  const reported = sharedSlot(REPORTED_SLOT, () => new Set<string>());
  for (const key of [...reported]) if (key.startsWith('@gym/metrics\u0000')) reported.delete(key);
}

/** A new, isolated instance of the package's sources, over a reset shared state. */
export async function freshMetrics(): Promise<MetricsModule> {
  resetSharedState();
  return freshCopy();
}

/** One more isolated instance of the package's sources (and of @gym/core), sharing the process's state. */
export async function freshCopy(): Promise<MetricsModule> {
  let loaded: MetricsModule | undefined;
  await jest.isolateModulesAsync(async () => {
    loaded = await import('../../src/index.js');
  });
  if (loaded === undefined) throw new Error('fresh @gym/metrics did not load');
  return loaded;
}

/** A provider whose every meter is `meter` (to record on one given meter). */
export function providerOf(meter: Meter): MeterProvider {
  return { getMeter: () => meter };
}
