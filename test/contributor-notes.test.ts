// Every contributor note `docs/<name>.md` belongs to a package or app of the same name and is
// linked from its README, so a contributor who opens the README finds it. A note with no
// package (or not worth a file) goes into CONTRIBUTING.md instead. `docs/telemetry.md` is the
// user contract, not a contributor note.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from '@jest/globals';

const repo = new URL('..', import.meta.url).pathname;
const CONTRACT = 'telemetry.md';

const notes = readdirSync(join(repo, 'docs'))
  .filter((file) => file.endsWith('.md') && file !== CONTRACT)
  .map((file) => file.slice(0, -'.md'.length))
  .sort();

it('there are contributor notes to check', () => {
  expect(notes.length).toBeGreaterThan(0);
});

it.each(notes)('docs/%s.md is linked from the README of its package or app', (name) => {
  const readme = ['packages', 'apps']
    .map((parent) => join(repo, parent, name, 'README.md'))
    .find((path) => existsSync(path));
  expect(readme).toBeDefined();
  expect(readFileSync(readme as string, 'utf8')).toContain(`](../../docs/${name}.md)`);
});
