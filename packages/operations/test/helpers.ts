// Operations-only test helpers. Everything generic (metric harness, readers, clock, deferred,
// diag capture) comes from @gym/test-kit.

/** A minimal counting semaphore of the acquire()/release-function kind. */
export function countingLimit(size: number) {
  let free = size;
  const waiters: (() => void)[] = [];
  const limit = {
    get free() {
      return free;
    },
    acquire(): Promise<() => void> {
      return new Promise((resolve) => {
        const grant = () => {
          free--;
          let released = false;
          resolve(() => {
            if (released) return;
            released = true;
            free++;
            waiters.shift()?.();
          });
        };
        if (free > 0) grant();
        else waiters.push(grant);
      });
    },
  };
  return limit;
}

/** mulberry32: a small seeded PRNG, so every run draws the same mix. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
