// Every skip says why, in one line per reason, from jest's JSON results (scripts/run-jest.mjs
// prints them before its `N passed, N failed` line). Suites skipped because programs are missing
// from PATH carry `[needs on PATH: …]` in a title (@gym/test-kit requireTools) and share ONE
// line naming every such suite and how to install the programs; any other skip names its
// reason as `[skipped: …]` in a title.
import { relative } from 'node:path';

const TOOLS_HINT = 'Debian/Ubuntu: apt-get install prometheus; Homebrew: brew install prometheus';

/** One line per reason: which suites skipped tests, and why (every skip names its reason). */
export function skipSummary(testResults, root) {
  const tools = new Set();
  const toolSuites = new Set();
  const reasons = new Map();
  for (const suite of testResults) {
    const file = relative(root, suite.name);
    for (const test of suite.assertionResults ?? []) {
      if (test.status !== 'pending' && test.status !== 'skipped') continue;
      const titles = [...(test.ancestorTitles ?? []), test.title].join(' ');
      const needs = /\[needs on PATH: ([^\]]+)\]/.exec(titles);
      const skipped = /\[skipped: ([^\]]+)\]/.exec(titles);
      if (needs) {
        for (const tool of needs[1].split(', ')) tools.add(tool);
        toolSuites.add(file);
      } else {
        const reason = skipped ? skipped[1] : 'no reason given (mark it: [skipped: why])';
        reasons.set(reason, (reasons.get(reason) ?? new Set()).add(file));
      }
    }
  }
  const lines = [];
  if (toolSuites.size > 0)
    lines.push(
      `skipped ${toolSuites.size} suite(s) that need ${[...tools].sort().join(' and ')} on PATH ` +
        `(${[...toolSuites].sort().join(', ')}); install: ${TOOLS_HINT}`,
    );
  for (const [reason, files] of reasons) lines.push(`skipped tests in ${[...files].sort().join(', ')}: ${reason}`);
  return lines;
}
