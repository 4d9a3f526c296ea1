// Programs the end-to-end suites run (Prometheus, promtool) are found on PATH only, never in a
// fixed folder, so Homebrew, a custom prefix and a PATH without them all behave as the user set
// them up. A suite that needs a missing program is skipped, and its title carries the marker
// `[needs on PATH: …]` from which scripts/run-jest.mjs prints ONE summary line naming every
// skipped suite and how to install the programs. With GYM_REQUIRE_TOOLS=1 (CI) the suite
// fails instead of skipping.

import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, it } from '@jest/globals';

/** How to install what the end-to-end suites need (one apt or brew package has both programs). */
export const TOOLS_INSTALL_HINT = 'Debian/Ubuntu: apt-get install prometheus; Homebrew: brew install prometheus';

/** The executable `name` in the first PATH folder that has it, or undefined. No other folder is tried. */
export function findOnPath(name: string, path: string = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

/** The programs a suite needs: where they are, and a `describe` that runs, skips or fails. */
export interface RequiredTools {
  /** The path of `name` on PATH; throws when it is missing (only reachable inside a running suite). */
  path(name: string): string;
  /** `describe` when every program is on PATH, else skipped (or failing under GYM_REQUIRE_TOOLS=1). */
  describe(title: string, body: () => void): void;
  /** `it` when every program is on PATH, else skipped (or failing under GYM_REQUIRE_TOOLS=1). */
  it(title: string, body: () => Promise<unknown> | undefined, timeout?: number): void;
}

export function requireTools(...names: string[]): RequiredTools {
  const found = new Map(names.map((name) => [name, findOnPath(name)] as const));
  const missing = names.filter((name) => found.get(name) === undefined);
  const reason = `${missing.join(' and ')} not on PATH (${TOOLS_INSTALL_HINT})`;
  const required = process.env.GYM_REQUIRE_TOOLS === '1';
  const marker = `[needs on PATH: ${missing.join(', ')}]`;
  const fail = () => {
    throw new Error(`${reason}; GYM_REQUIRE_TOOLS=1 turns this skip into a failure`);
  };
  return {
    path(name) {
      const path = found.get(name);
      if (path === undefined) throw new Error(`${name} is not on PATH (${TOOLS_INSTALL_HINT})`);
      return path;
    },
    describe(title, body) {
      if (missing.length === 0) describe(title, body);
      else if (required) describe(title, () => it('finds its programs on PATH', fail));
      else describe.skip(`${title} ${marker}`, body);
    },
    it(title, body, timeout) {
      if (missing.length === 0) it(title, body, timeout);
      else if (required) it(title, fail);
      else it.skip(`${title} ${marker}`, body);
    },
  };
}
