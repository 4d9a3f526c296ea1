// Waiting for the event a test needs, never for a fixed time. A fixed sleep is a bet that the
// thing has happened by then, and a loaded machine loses that bet (a 20 ms wait for a
// PerformanceObserver delivery once turned CI red). `waitFor` looks again on every macrotask
// turn until the check holds; the deadline only turns a hang into a failure that says what was
// awaited, and is far beyond what a slow machine needs.
//
// The timer and clock are captured when this module loads, so a test that installs Jest's fake
// timers afterwards still waits in real time here.

/** The deadline when none is given: a failure guard, not an expectation. */
export const WAIT_FOR_TIMEOUT_MS = 10_000;

const realSetTimeout = globalThis.setTimeout;
const realNow = performance.now.bind(performance);

/** Resolves after one macrotask turn: every due timer, immediate and I/O callback had its chance. */
function nextTurn(delayMs: number): Promise<void> {
  return new Promise((resolve) => {
    realSetTimeout(resolve, delayMs);
  });
}

/**
 * Resolves with the first result of `check` that is neither `undefined`, `null` nor `false`,
 * looking again every turn (1 ms at first, backing off to 10 ms). Rejects when `timeoutMs` pass
 * first, naming `what`, or with the error `check` threw.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs: number = WAIT_FOR_TIMEOUT_MS,
): Promise<T> {
  const deadline = realNow() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    const result = await check();
    if (result !== undefined && result !== null && result !== false) return result;
    if (realNow() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await nextTurn(Math.min(1 + attempt, 10));
  }
}
