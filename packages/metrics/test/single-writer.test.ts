// The repository test of the single-writer rule: in apps/ and packages/, only the demo's
// orchestrator module may call recordActiveServers (the runtime refusal catches a wrong
// process; this catches a wrong module before it runs). The scan must read a real number of
// files, and the same scanner is run over a fixture with a bad caller to prove it can fail.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type CallerScan, type ScanOptions, scanForCallers } from './support/scan-callers.js';

/** The repository root, from this file's place in it (packages/metrics/test/). */
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const IDENTIFIER = 'recordActiveServers';
/** The one module allowed to write gym.servers.active. */
const ALLOWED_CALLERS: ReadonlySet<string> = new Set(['apps/demo/src/orchestrator.ts']);
const SCAN: ScanOptions = { folders: ['apps', 'packages'], exclude: ['packages/metrics'] };

/** Files that refer to recordActiveServers without being allowed to. */
function outsiders(scan: CallerScan): string[] {
  return scan.callers.filter((file) => !ALLOWED_CALLERS.has(file));
}

describe('single writer of gym.servers.active', () => {
  it('in this repository, only apps/demo/src/orchestrator.ts calls recordActiveServers', () => {
    const scan = scanForCallers(REPO_ROOT, IDENTIFIER, SCAN);
    // Non-vacuous: the scan reached both trees and read a real number of files.
    expect(scan.filesRead.length).toBeGreaterThanOrEqual(10);
    expect(scan.filesRead).toContain('apps/demo/src/orchestrator.ts');
    expect(scan.filesRead).toContain('packages/core/src/telemetry-state.ts');
    expect(scan.filesRead.filter((f) => /(^|\/)(node_modules|dist)\/|^packages\/metrics\//.test(f))).toEqual([]);
    // The rule: the orchestrator module is the one and only caller.
    expect(outsiders(scan)).toEqual([]);
    expect(scan.callers).toEqual(['apps/demo/src/orchestrator.ts']);
  });

  describe('the scanner can fail', () => {
    let fixture = '';
    const write = (path: string, text: string) => {
      const full = join(fixture, path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, text);
    };
    beforeAll(() => {
      fixture = mkdtempSync(join(tmpdir(), 'gym-single-writer-'));
      write(
        'apps/demo/src/orchestrator.ts',
        "import { recordActiveServers } from '@gym/metrics';\nrecordActiveServers(3);\n",
      );
      write(
        'apps/demo/src/server.ts',
        "import * as gym from '@gym/metrics';\nexport const f = () => gym.recordActiveServers(1);\n",
      );
      write('apps/demo/src/alias.mjs', "import { recordActiveServers as write } from '@gym/metrics';\nwrite(2);\n");
      write(
        'packages/operations/src/notes.ts',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: fixture source text that holds a template literal
        "// recordActiveServers belongs to the orchestrator\n/* recordActiveServers(9) */\nexport const s = 'recordActiveServers(1)';\nexport const t = `see ${'x'} recordActiveServers`;\nexport const myrecordActiveServersCount = 1;\n",
      );
      write('packages/operations/node_modules/dep/index.js', 'recordActiveServers(1);\n');
      write('packages/operations/dist/index.js', 'recordActiveServers(1);\n');
      write('packages/metrics/src/record-active-servers.ts', 'export function recordActiveServers() {}\n');
      write('apps/demo/README.md', 'recordActiveServers(1)\n');
    });
    afterAll(() => rmSync(fixture, { recursive: true, force: true }));

    it('finds the bad callers (namespace call, alias) and only them', () => {
      const scan = scanForCallers(fixture, IDENTIFIER, SCAN);
      expect(scan.callers).toEqual([
        'apps/demo/src/alias.mjs',
        'apps/demo/src/orchestrator.ts',
        'apps/demo/src/server.ts',
      ]);
      expect(outsiders(scan)).toEqual(['apps/demo/src/alias.mjs', 'apps/demo/src/server.ts']);
    });

    it('reads sources only, and never dependencies, build output or the excluded package', () => {
      const scan = scanForCallers(fixture, IDENTIFIER, SCAN);
      expect(scan.filesRead).toEqual([
        'apps/demo/src/alias.mjs',
        'apps/demo/src/orchestrator.ts',
        'apps/demo/src/server.ts',
        'packages/operations/src/notes.ts',
      ]);
    });
  });
});
