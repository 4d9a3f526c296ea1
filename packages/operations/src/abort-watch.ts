// One `abort` listener per signal, however many operations wait on it. A server passes one
// shutdown signal to every operation; a listener per waiter would put 1,000 listeners on it and
// Node would print a MaxListenersExceededWarning (and look like a leak, because it is one while
// they wait). Here a signal carries exactly one listener while at least one operation waits on
// it, and none once the last one stops waiting.

/** Something that waits and must hear when its signal aborts. */
export interface AbortWaiter {
  /** The signal aborted with `reason`. Called at most once, synchronously inside the abort. */
  onAbort(reason: unknown): void;
}

/** The one listener of one signal, and who listens through it. */
class Watch {
  readonly waiters = new Set<AbortWaiter>();

  constructor(private readonly signal: AbortSignal) {}

  handleEvent(): void {
    const signal = this.signal;
    signal.removeEventListener('abort', this);
    watches.delete(signal);
    const reason = signal.reason;
    // Each waiter leaves its queue and rejects its caller; one that throws does not stop the rest.
    for (const waiter of this.waiters) {
      try {
        waiter.onAbort(reason);
      } catch {
        // A waiter's own caller gets the error through its promise; nothing to add here.
      }
    }
    this.waiters.clear();
  }
}

const watches = new WeakMap<AbortSignal, Watch>();

/** Tells `waiter` when `signal` aborts, until {@link unwatchAbort}. `signal` must not be aborted yet. */
export function watchAbort(signal: AbortSignal, waiter: AbortWaiter): void {
  let watch = watches.get(signal);
  if (watch === undefined) {
    watch = new Watch(signal);
    watches.set(signal, watch);
    signal.addEventListener('abort', watch);
  }
  watch.waiters.add(waiter);
}

/** Stops telling `waiter`; the signal loses its listener when nobody waits on it any more. */
export function unwatchAbort(signal: AbortSignal, waiter: AbortWaiter): void {
  const watch = watches.get(signal);
  if (watch === undefined || !watch.waiters.delete(waiter)) return;
  if (watch.waiters.size === 0) {
    watches.delete(signal);
    signal.removeEventListener('abort', watch);
  }
}

/** True for an AbortSignal (or anything with its shape: `aborted`, add/removeEventListener). */
export function isSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function' &&
    typeof (value as AbortSignal).removeEventListener === 'function'
  );
}
