// The package entry is what users import: every runtime export is listed here, so a new one
// (or a test-only one coming back) is a deliberate change to this list. Resetting the process
// state is for this package's tests only; they import it from src/telemetry.ts.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import * as entry from '../src/index.js';
import { resetTelemetryForTesting } from '../src/telemetry.js';

describe('@gym/otel-bootstrap public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(entry).sort()).toEqual([
      'CONFIG_DEFAULTS',
      'ENV_SLURM_JOB_ID',
      'SCOPE_NAME',
      'WARNING_CODE',
      'configureTelemetryEnv',
      'getTelemetry',
      'initTelemetry',
      'isSpanGroupEnabled',
      'loadTelemetryConfig',
      'shutdownTelemetry',
    ]);
  });

  it('is what the README API table lists, no more and no less', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = readme.slice(readme.indexOf('## API'), readme.indexOf('Options of `initTelemetry`'));
    const documented = table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Za-z_]\w*)/g)].map((match) => match[1]));
    expect(documented.sort()).toEqual(Object.keys(entry).sort());
  });

  it('does not export the test-only reset, under any name', () => {
    expect(Object.keys(entry).filter((name) => /reset|testing/i.test(name))).toEqual([]);
    expect(Object.values(entry)).not.toContain(resetTelemetryForTesting);
  });
});
