// Attributes stay bounded: at most 64 distinct limit names per process. A limit with a 65th name
// still limits, counts and answers state(), but is never exported, and one warning says why.
// (Each jest test file has its own global, so this file starts with no names admitted.)

import { ATTR_CONCURRENCY_LIMIT_NAME, INSTRUMENTS, MAX_LIMIT_NAMES } from '@gym/constants';
import { meteredLimit } from '@gym/operations';
import { captureDiag, collectMetrics, createMetricHarness, type DiagCapture } from '@gym/test-kit';
import { afterEach, beforeEach, expect, it } from '@jest/globals';
import { Semaphore } from 'async-mutex';

let diagnostics: DiagCapture;
beforeEach(() => {
  diagnostics = captureDiag();
});
afterEach(() => diagnostics.stop());
/** The warning and error messages of the running test. */
const warnings = (): string[] => diagnostics.atLeast('warn').map((entry) => entry.message);

it(`the first ${MAX_LIMIT_NAMES} distinct names are exported; later new names work but are never exported, with one warning`, async () => {
  const { meterProvider: provider, reader } = createMetricHarness();
  const options = (limitName: string) => ({ component: 'other', limitName, meterProvider: provider }) as const;
  const admitted = Array.from({ length: MAX_LIMIT_NAMES }, (_, i) =>
    meteredLimit(new Semaphore(1), options(`limit_${i}`)),
  );
  const refused = meteredLimit(new Semaphore(2), options('one_too_many'));
  const refusedToo = meteredLimit(new Semaphore(2), options('two_too_many'));
  const again = meteredLimit(new Semaphore(3), options('limit_0')); // an admitted name stays admitted

  // The refused ones still do their job.
  expect(await refused.run(() => 'still limits')).toBe('still limits');
  expect(refused.state()).toMatchObject({ limit: 2, active: 0, available: 2 });
  expect(await refusedToo.run(() => 1)).toBe(1);

  const m = await collectMetrics(reader);
  const names = (m.get(INSTRUMENTS.concurrencyLimit.name)?.dataPoints ?? []).map(
    (p) => p.attributes[ATTR_CONCURRENCY_LIMIT_NAME],
  );
  expect(new Set(names).size).toBe(MAX_LIMIT_NAMES);
  expect(names).not.toContain('one_too_many');
  expect(names).not.toContain('two_too_many');
  const limit0 = m
    .get(INSTRUMENTS.concurrencyLimit.name)
    ?.dataPoints.find((p) => p.attributes[ATTR_CONCURRENCY_LIMIT_NAME] === 'limit_0');
  expect(limit0?.value).toBe(4); // `again` is summed with the first limit_0
  expect(warnings()).toHaveLength(1);
  expect(warnings()[0]).toMatch(
    /^@gym\/operations: more than 64 distinct metered limit names in this process; "one_too_many" and any later new name work but are never exported/,
  );
  expect(admitted).toHaveLength(MAX_LIMIT_NAMES);
  expect(again.state().limit).toBe(3);
});
