// waitFor is how every test waits for an asynchronous event: it must resolve with the first
// value that holds, say what it waited for when the guard runs out, pass on a check's error, and
// keep real time when a test has switched on fake timers.

import { waitFor } from '@gym/test-kit';
import { afterEach, expect, it, jest } from '@jest/globals';

afterEach(() => {
  jest.useRealTimers();
});

it('resolves with the first result that is not undefined, null or false', async () => {
  let calls = 0;
  const seen: unknown[] = [undefined, null, false, 0];
  const result = await waitFor('the fourth look', () => seen[calls++]);
  // 0 is a result (a count can be zero): only undefined, null and false mean "not yet".
  expect(result).toBe(0);
  expect(calls).toBe(4);
});

it('waits across macrotask turns for something a timer does later', async () => {
  let ready = false;
  setTimeout(() => {
    ready = true;
  }, 5);
  await expect(waitFor('the timer', () => ready)).resolves.toBe(true);
});

it('rejects after the guard, naming what it waited for', async () => {
  await expect(waitFor('a thing that never happens', () => false, 30)).rejects.toThrow(
    'timed out after 30 ms waiting for a thing that never happens',
  );
});

it('passes on the error a check throws or rejects with', async () => {
  await expect(
    waitFor('a throwing check', () => {
      throw new Error('check broke');
    }),
  ).rejects.toThrow('check broke');
  await expect(waitFor('a rejecting check', () => Promise.reject(new Error('async check broke')))).rejects.toThrow(
    'async check broke',
  );
});

it('keeps real time under fake timers (it would hang if it used the faked setTimeout)', async () => {
  jest.useFakeTimers();
  let looks = 0;
  await expect(waitFor('the third look', () => ++looks >= 3)).resolves.toBe(true);
  expect(looks).toBe(3);
});
