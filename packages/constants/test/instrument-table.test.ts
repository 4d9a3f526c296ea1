// The instrument table's own rules, beyond what test/telemetry-doc.test.ts compares with the
// contract and a real SDK: buckets that an SDK accepts, metric attributes that are bounded keys
// of this package, and one entry per name.

import * as constants from '@gym/constants';
import { INSTRUMENTS, type InstrumentEntry, type InstrumentKind } from '@gym/constants';
import { describe, expect, it } from '@jest/globals';

const entries: [string, InstrumentEntry][] = Object.entries(INSTRUMENTS);
const KINDS: readonly InstrumentKind[] = [
  'histogram',
  'counter',
  'up-down counter',
  'gauge',
  'observable counter',
  'observable up-down counter',
  'observable gauge',
];
const attributeKeys: ReadonlySet<unknown> = new Set(
  Object.entries(constants)
    .filter(([name]) => name.startsWith('ATTR_'))
    .map(([, key]) => key),
);

describe('INSTRUMENTS', () => {
  it('has one entry per instrument name, each of a known kind', () => {
    expect(entries.length).toBeGreaterThan(20);
    expect(new Set(entries.map(([, entry]) => entry.name)).size).toBe(entries.length);
    expect(entries.filter(([, entry]) => !KINDS.includes(entry.kind)).map(([id]) => id)).toEqual([]);
  });

  it('gives every histogram, and nothing else, strictly increasing finite boundaries', () => {
    const bad = entries.filter(([, entry]) => {
      if (entry.kind !== 'histogram') return entry.boundaries !== undefined;
      const list = entry.boundaries;
      return (
        list.length === 0 ||
        list.some((value, i) => !Number.isFinite(value) || (i > 0 && value <= (list[i - 1] as number)))
      );
    });
    expect(bad.map(([id]) => id)).toEqual([]);
  });

  it('names only attribute keys this package exports, never an id, never twice on one entry', () => {
    const bad = entries.flatMap(([id, entry]) =>
      entry.attributes
        .filter((key, i) => !attributeKeys.has(key) || /\.id$/.test(key) || entry.attributes.indexOf(key) !== i)
        .map((key) => `${id}: ${key}`),
    );
    expect(bad).toEqual([]);
  });

  it('states a description and a value type for every entry', () => {
    const bad = entries.filter(
      ([, entry]) => entry.description.trim() === '' || !['int', 'double'].includes(entry.valueType),
    );
    expect(bad.map(([id]) => id)).toEqual([]);
  });
});
