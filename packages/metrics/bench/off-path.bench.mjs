// "Off is free", measured: with nothing exporting, a recorder call is its input check plus
// the exporting gate (`isMetricsExporting()` from @gym/constants) and nothing else: no clock
// read, no allocation, no map update. Reported as ratios against primitives measured in the
// same process (never absolute nanoseconds, which say more about the machine than the code):
// the gate itself, one clock read, and a bare function call. Runs on the build output:
// `npm run bench` (root) builds first.
import { isMetricsExporting } from '@gym/core';
import { checkOffPath } from '../../../scripts/bench/measure.mjs';
import { recordActiveServers, recordRolloutDuration, recordVerify } from '../dist/index.js';

if (isMetricsExporting()) {
  console.error('metrics are exporting in the bench process; the off path cannot be measured');
  process.exit(1);
}

const { ok } = checkOffPath({
  gateName: 'isMetricsExporting()',
  gate: isMetricsExporting,
  state: 'metrics off',
  cases: {
    recordRolloutDuration: (i) => recordRolloutDuration(i),
    'recordVerify (tallies)': (i) => recordVerify(i, (i & 1) === 0),
    recordActiveServers: (i) => recordActiveServers(i),
  },
  calls: 200_000,
  rounds: 15,
  // Off, a recorder may cost at most this many gates (its own work must stay a few compares)
  maxGates: 3,
  // and less than one clock read (the work it exists to avoid).
  maxClocks: 1,
});
if (!ok) process.exit(1);
