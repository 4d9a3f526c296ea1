// The handler the observed dispatch hands to the pool in place of the caller's: it forwards every
// callback, unchanged and on the caller's own handler (so `this`, private fields and return
// values are the caller's). For a request that waits, it also ends the wait when undici starts
// the request on a connection, when undici ends it first, or when the caller's `signal`
// aborts, whichever comes first.
//
// undici has two handler shapes: the one of undici 7+ (`onRequestStart`, `onResponseStart`,
// …, with a controller) and the older one (`onConnect`, `onHeaders`, …, with an abort
// function), which undici 6 calls and undici 7 still accepts. The waiter takes the caller's
// shape, so undici treats it exactly as it treats the caller's handler.

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
 * The waits of each signal. A signal gets one abort listener however many of its requests wait
 * (a caller often shares one signal among many requests): next to undici's own listener per
 * request, that keeps a signal under Node 20's listener-count warning as long as undici alone
 * would.
 */
const waitsOf = new WeakMap<Signal, Set<Waiter>>();

/** The abort listener: every wait of the signal was given up. */
function giveUp(this: Signal): void {
  const waits = waitsOf.get(this);
  if (waits === undefined) return;
  waitsOf.delete(this);
  this.removeEventListener('abort', giveUp);
  for (const waiter of waits) waiter.gaveUp();
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
   * The observed dispatch found that the request waits: its wait starts now, and ends at the
   * first of its start, its end and its `signal`'s abort. A request given up before it was sent
   * never waited for its caller: no point.
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

  /** The caller gave the wait up: its signal aborted. undici may keep the request queued. */
  gaveUp(): void {
    this.#signal = undefined;
    this.#end(false);
  }

  /**
   * The request left: `true` when undici started it on a connection, `false` when it ended
   * first. A request whose caller already gave up is started by undici only to be aborted at
   * once, with the error delivered synchronously inside the start callback: that error settles
   * the wait as abandoned before the start callback's `finally` (and a wait given up at its
   * abort was settled then).
   */
  protected done(gotConnection: boolean): void {
    this.left = true;
    const signal = this.#signal;
    if (signal !== undefined) {
      this.#signal = undefined;
      const waits = waitsOf.get(signal);
      if (waits?.delete(this) && waits.size === 0) {
        waitsOf.delete(signal);
        signal.removeEventListener('abort', giveUp);
      }
    }
    this.#end(gotConnection);
  }

  #end(gotConnection: boolean): void {
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
