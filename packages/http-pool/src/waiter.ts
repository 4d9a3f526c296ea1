// The handler the observed dispatch hands to the pool in place of the caller's: it forwards every
// callback, unchanged and on the caller's own handler (so `this`, private fields and return
// values are the caller's), and notes when undici starts the request on a connection.
//
// undici has two handler shapes: the one of undici 7+ (`onRequestStart`, `onResponseStart`,
// …, with a controller) and the older one (`onConnect`, `onHeaders`, …, with an abort
// function), which undici 6 calls and undici 7 still accepts. The waiter takes the caller's
// shape, so undici treats it exactly as it treats the caller's handler.

type Callback = (...args: unknown[]) => unknown;
type Handler = Record<string, Callback | undefined>;

/** Called once for a queued request: when it got a connection, or gave the wait up. */
export type Settle = (queuedAt: number, gotConnection: boolean) => void;

/** A forwarding handler that times the wait of a queued request. */
abstract class Waiter {
  /** True once undici started the request or ended it (so it is not waiting in a queue). */
  left = false;
  #queuedAt = -1;
  constructor(
    protected readonly handler: Handler,
    private readonly settle: Settle,
  ) {}

  /** Called by the observed dispatch when the pool queued the request, with the clock then. */
  queue(now: number): void {
    this.#queuedAt = now;
  }

  /**
   * The request left the queue: `true` when undici started it on a connection, `false` when it
   * ended first. A caller that gave the wait up aborts the moment undici offers it a
   * connection, and undici delivers that abort's error synchronously, inside the start
   * callback: the error settles the wait as abandoned before the start callback returns.
   */
  protected done(gotConnection: boolean): void {
    this.left = true;
    if (this.#queuedAt < 0) return;
    const queuedAt = this.#queuedAt;
    this.#queuedAt = -1;
    this.settle(queuedAt, gotConnection);
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
export function waiterFor(handler: object, settle: Settle): Waiter {
  const callbacks = handler as Handler;
  return typeof callbacks.onRequestStart === 'function'
    ? new ControllerWaiter(callbacks, settle)
    : new AbortWaiter(callbacks, settle);
}
