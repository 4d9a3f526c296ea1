// The README's variable table is documentation people configure fleets from: it must list
// every variable the code reads, with the code's own fallback, default, allowed values and,
// for the standard variables, when they are read.

import { readFileSync } from 'node:fs';
import { FAILURE_POLICY, GYM_VARIABLES } from '@gym/core/internal';
import { describe, expect, it } from '@jest/globals';
import { OTEL_SWITCHES, OTEL_VARIABLES, OTLP_VARIABLES } from '../src/otel-variables.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('## Environment variables'), readme.indexOf('## Exporters'));
const rows = new Map(
  section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .map((cells) => [cells[1] as string, cells.slice(2, 5)]),
);

interface Documented {
  readonly names: readonly string[];
  readonly defaultText: string;
  readonly allowed: string;
  readonly readWhen?: string;
}

const variables: Documented[] = [
  ...Object.values(GYM_VARIABLES),
  ...Object.values(OTEL_VARIABLES),
  ...Object.values(OTEL_SWITCHES),
  ...Object.values(OTLP_VARIABLES),
];

describe('README variable table', () => {
  it.each(variables.map((variable) => [variable.names[0], variable] as const))('documents %s', (name, variable) => {
    const row = rows.get(`\`${name}\``);
    expect(row).toBeDefined();
    const [fallback, defaultText, allowed] = row as string[];
    expect(fallback).toBe(variable.names[1] === undefined ? '—' : `\`${variable.names[1]}\``);
    expect(defaultText).toBe(variable.defaultText);
    expect(allowed?.startsWith(variable.allowed)).toBe(true);
    if (variable.readWhen !== undefined && variable.readWhen !== 'always') {
      expect(allowed).toContain(`; read only with ${variable.readWhen}`);
    }
  });

  it('has no row the code does not read', () => {
    const known = new Set(variables.map((variable) => `\`${variable.names[0]}\``));
    expect([...rows.keys()].filter((name) => !known.has(name))).toEqual([]);
  });
});

describe('README', () => {
  it('states the failure policy, word for word', () => {
    expect(readme).toContain(`## Failure policy\n\n${FAILURE_POLICY}\n`);
  });
});
