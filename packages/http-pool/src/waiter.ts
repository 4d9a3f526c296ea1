// The handler the observed dispatch hands to the pool in place of the caller's: it forwards every
// callback, unchanged, on the caller's own handler (its `this`, private fields and return values).
// It takes the caller's shape, which decides how undici calls it: undici 7's (`onRequestStart`,
// …, with a controller) or the older one (`onConnect`, …, with an abort function), which undici
// 6 calls and undici 7 still accepts.

type Callback = (...args: unknown[]) => unknown;
type Handler = Record<string, Callback | undefined>;

/** Called once per wait: when the request got a connection, or when the wait was given up. */
export type Settle = (waitedMs: number, gotConnection: boolean) => void;

/** What a waiter needs of the caller's `signal`: an `AbortSignal` (or any EventTarget like it). */
interface Signal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: (this: Signal) => void): void;
  removeEventListener(type: 'abort', listener: (this: Signal) => void): void;
}

/**
 * The waits of each signal, which gets one abort listener however many of its requests wait:
 * beside undici's own listener per request, a signal shared by many requests stays under Node
 * 20's listener-count warning as long as undici alone would.
 */
const waitsOf = new WeakMap<Signal, Set<Waiter>>();

/** The abort listener: every wait of the signal was given up. */
function giveUp(this: Signal): void {
  for (const waiter of waitsOf.get(this) ?? []) waiter.done(false);
}

/** A forwarding handler that times one wait. */
abstract class Waiter {
  /** True once undici started the request or ended it (so it is not waiting for a connection). */
  left = false;
  #since = 0;
  #settle: Settle | undefined;
  #signal: Signal | undefined;
  constructor(protected readonly handler: Handler) {}

  /**
   * The request waits from now to the first of its start, its end and its `signal`'s abort. A
   * request given up before it was sent never waited for its caller: no point.
   */
  wait(settle: Settle, signal: unknown): void {
    const target = signal as Partial<Signal> | null | undefined;
    if (target?.aborted === true) return;
    this.#since = performance.now();
    this.#settle = settle;
    if (typeof target?.addEventListener !== 'function') return;
    const listened = target as Signal;
    this.#signal = listened;
    let waits = waitsOf.get(listened);
    if (waits === undefined) {
      waits = new Set();
      waitsOf.set(listened, waits);
      listened.addEventListener('abort', giveUp);
    }
    waits.add(this);
  }

  /**
   * The wait ends: `true` when undici started the request on a connection, `false` when it ended
   * it first or the caller gave up (undici may keep that request queued, then start it only to
   * abort it at once, inside the start callback: the first settling counts).
   */
  done(gotConnection: boolean): void {
    this.left = true;
    const signal = this.#signal;
    if (signal !== undefined) {
      this.#signal = undefined;
      const waits = waitsOf.get(signal)!;
      waits.delete(this);
      if (waits.size === 0) {
        waitsOf.delete(signal);
        signal.removeEventListener('abort', giveUp);
      }
    }
    const settle = this.#settle;
    if (settle === undefined) return;
    this.#settle = undefined;
    settle(performance.now() - this.#since, gotConnection);
  }
}

/** undici 7+ handlers (`onRequestStart` and the `onResponse*` callbacks). */
class ControllerWaiter extends Waiter {
  onRequestStart(controller: unknown, context: unknown): unknown {
    try {
      return this.handler.onRequestStart?.(controller, context);
    } finally {
      this.done(true);
    }
  }
  onRequestUpgrade(controller: unknown, statusCode: unknown, headers: unknown, socket: unknown): unknown {
    return this.handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }
  onResponseStart(controller: unknown, statusCode: unknown, headers: unknown, statusMessage: unknown): unknown {
    return this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }
  onResponseData(controller: unknown, chunk: unknown): unknown {
    return this.handler.onResponseData?.(controller, chunk);
  }
  onResponseEnd(controller: unknown, trailers: unknown): unknown {
    return this.handler.onResponseEnd?.(controller, trailers);
  }
  onResponseError(controller: unknown, error: unknown): unknown {
    try {
      return this.handler.onResponseError?.(controller, error);
    } finally {
      this.done(false);
    }
  }
}

/** Older handlers (`onConnect`, `onHeaders`, `onData`, `onComplete`, `onError`, …). */
class AbortWaiter extends Waiter {
  onConnect(abort: unknown, context: unknown): unknown {
    try {
      return this.handler.onConnect?.(abort, context);
    } finally {
      this.done(true);
    }
  }
  onUpgrade(statusCode: unknown, headers: unknown, socket: unknown): unknown {
    return this.handler.onUpgrade?.(statusCode, headers, socket);
  }
  onHeaders(statusCode: unknown, headers: unknown, resume: unknown, statusText: unknown): unknown {
    return this.handler.onHeaders?.(statusCode, headers, resume, statusText);
  }
  onData(chunk: unknown): unknown {
    return this.handler.onData?.(chunk);
  }
  onComplete(trailers: unknown): unknown {
    return this.handler.onComplete?.(trailers);
  }
  onBodySent(chunk: unknown): unknown {
    return this.handler.onBodySent?.(chunk);
  }
  onResponseStarted(): unknown {
    return this.handler.onResponseStarted?.();
  }
  onError(error: unknown): unknown {
    try {
      return this.handler.onError?.(error);
    } finally {
      this.done(false);
    }
  }
}

/** A waiter of the caller's handler shape. */
export function waiterFor(handler: object): Waiter {
  const callbacks = handler as Handler;
  return typeof callbacks.onRequestStart === 'function' ? new ControllerWaiter(callbacks) : new AbortWaiter(callbacks);
}
