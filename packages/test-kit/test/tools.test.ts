// Programs are found on PATH only: a folder that is not on PATH is never tried, whatever it
// holds (apps/demo/test/local-prometheus.test.ts holds the demo's lookup to the same rule).

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, join } from 'node:path';
import { findOnPath } from '@gym/test-kit';
import { afterAll, expect, it } from '@jest/globals';

const dir = mkdtempSync(join(tmpdir(), 'gym-tools-'));
const empty = mkdtempSync(join(tmpdir(), 'gym-tools-empty-'));
const fake = join(dir, 'prometheus');
writeFileSync(fake, '#!/bin/sh\nexit 0\n');
chmodSync(fake, 0o755);
writeFileSync(join(dir, 'not-executable'), '');
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
});

it('findOnPath takes the first PATH folder that has the executable, and nothing else', () => {
  expect(findOnPath('prometheus', [empty, dir].join(delimiter))).toBe(fake);
  expect(findOnPath('prometheus', empty)).toBeUndefined();
  expect(findOnPath('prometheus', '')).toBeUndefined();
  expect(findOnPath('not-executable', dir)).toBeUndefined();
  // A folder is not a program.
  expect(findOnPath(basename(empty), tmpdir())).toBeUndefined();
});
