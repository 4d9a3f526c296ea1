// The verify tally behind `gym.verify.success_rate`: process-wide and cumulative since the
// process started, counted even while metrics are not exporting, so a process whose
// telemetry comes up late still reports the fraction over its whole life (Gym's definition;
// a windowed rate would need a clock and a buffer on the hot path). It lives in a @gym/core
// shared slot, not in module state: two copies of this package in one process (an install
// that did not deduplicate it) count into one tally and export one fraction.

import { sharedSlot } from '@gym/core/internal';

/** Name of the shared slot; the shape below is only ever extended under this name. */
export const VERIFY_TALLY_SLOT = '@gym/metrics/verify-tally@1';

/** Verify calls counted so far in this process. */
export interface VerifyTally {
  calls: number;
  completed: number;
}

const tally = sharedSlot<VerifyTally>(VERIFY_TALLY_SLOT, () => ({ calls: 0, completed: 0 }));

/** Counts one verify call and returns the cumulative success fraction, in [0, 1]. */
export function tallyVerify(succeeded: boolean): number {
  tally.calls += 1;
  if (succeeded) tally.completed += 1;
  return tally.completed / tally.calls;
}
