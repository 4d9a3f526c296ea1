// Every limit kind of the fixture against every rule, every way in.

import { afterEach, describe, it, jest } from '@jest/globals';
import { KINDS, RULES, WAYS } from './kinds.js';

afterEach(() => {
  jest.useRealTimers();
});

describe.each(KINDS.map((kind) => [kind.name, kind] as const))('%s', (_name, kind) => {
  describe.each(WAYS)('%s', (_way, way) => {
    it.each(RULES.map((rule) => [rule.name, rule] as const))('%s', async (_rule, rule) => {
      await rule.check(kind, way);
    });
  });
});
