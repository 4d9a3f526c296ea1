// Sums jest JSON result files (scripts/run-jest.mjs writes one per run) into the one line CI
// reads: `N passed, N failed`. A missing or unreadable file counts as one failure, and so does
// a suite that failed to load without failing a test. Exit code 0 only when nothing failed.
// Usage: node scripts/sum-results.mjs results-a.json results-b.json ...
import { readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;
for (const file of process.argv.slice(2)) {
  try {
    const json = JSON.parse(readFileSync(file, 'utf8'));
    const failedTests = Number(json.numFailedTests) || 0;
    const failedSuites = Number(json.numFailedTestSuites) || 0;
    passed += Number(json.numPassedTests) || 0;
    failed += failedTests === 0 && failedSuites > 0 ? failedSuites : failedTests;
  } catch {
    failed += 1;
  }
}
if (process.argv.length <= 2) failed += 1;
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
