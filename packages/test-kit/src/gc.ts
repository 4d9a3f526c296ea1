// Forced full collections, for tests that prove nothing keeps a dropped object alive.
// `gc` is taken from a context made while --expose-gc is briefly on, so no test run needs the flag.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let exposed: (() => void) | undefined;

/** One forced full collection. */
export function gc(): void {
  if (exposed === undefined) {
    setFlagsFromString('--expose-gc');
    exposed = runInNewContext('gc') as () => void;
    setFlagsFromString('--no-expose-gc');
  }
  exposed();
}

/** Whether `ref`'s target is collected within a few full collections, each in a later turn. */
export async function collectedByGc(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setImmediate(resolve)); // a WeakRef read keeps its target until the turn ends
    gc();
    if (ref.deref() === undefined) return true;
  }
  return false;
}
