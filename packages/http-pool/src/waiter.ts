// The handler the interceptor hands to the pool in place of the caller's: it forwards every
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
export type Settle = (started: number, gotConnection: boolean) => void;

/** A forwarding handler that times the wait of a queued request. */
export interface Waiter {
  /** Set by the interceptor when the pool queued the request. */
  queued: boolean;
}

abstract class WaiterBase implements Waiter {
  queued = false;
  #settled = false;
  constructor(
    protected readonly handler: Handler,
    private readonly started: number,
    private readonly settle: Settle,
  ) {}

  /**
   * The request left the queue: `true` when undici started it on a connection, `false` when it
   * ended first. A caller that gave the wait up aborts the moment undici offers it a
   * connection, and undici delivers that abort's error synchronously, inside the start
   * callback: the error settles the wait as abandoned before the start callback returns.
   */
  protected done(gotConnection: boolean): void {
    if (!this.queued || this.#settled) return;
    this.#settled = true;
    this.settle(this.started, gotConnection);
  }
}

/** undici 7+ handlers (`onRequestStart` and the `onResponse*` callbacks). */
class ControllerWaiter extends WaiterBase {
  onRequestStart(...args: unknown[]): unknown {
    try {
      return this.handler.onRequestStart?.(...args);
    } finally {
      this.done(true);
    }
  }
  onRequestUpgrade(...args: unknown[]): unknown {
    return this.handler.onRequestUpgrade?.(...args);
  }
  onResponseStart(...args: unknown[]): unknown {
    return this.handler.onResponseStart?.(...args);
  }
  onResponseData(...args: unknown[]): unknown {
    return this.handler.onResponseData?.(...args);
  }
  onResponseEnd(...args: unknown[]): unknown {
    return this.handler.onResponseEnd?.(...args);
  }
  onResponseError(...args: unknown[]): unknown {
    try {
      return this.handler.onResponseError?.(...args);
    } finally {
      this.done(false);
    }
  }
}

/** Older handlers (`onConnect`, `onHeaders`, `onData`, `onComplete`, `onError`, …). */
class AbortWaiter extends WaiterBase {
  onConnect(...args: unknown[]): unknown {
    try {
      return this.handler.onConnect?.(...args);
    } finally {
      this.done(true);
    }
  }
  onUpgrade(...args: unknown[]): unknown {
    return this.handler.onUpgrade?.(...args);
  }
  onHeaders(...args: unknown[]): unknown {
    return this.handler.onHeaders?.(...args);
  }
  onData(...args: unknown[]): unknown {
    return this.handler.onData?.(...args);
  }
  onComplete(...args: unknown[]): unknown {
    return this.handler.onComplete?.(...args);
  }
  onBodySent(...args: unknown[]): unknown {
    return this.handler.onBodySent?.(...args);
  }
  onResponseStarted(...args: unknown[]): unknown {
    return this.handler.onResponseStarted?.(...args);
  }
  onError(...args: unknown[]): unknown {
    try {
      return this.handler.onError?.(...args);
    } finally {
      this.done(false);
    }
  }
}

/** A waiter of the caller's handler shape. */
export function waiterFor(handler: object, started: number, settle: Settle): Waiter {
  const callbacks = handler as Handler;
  return typeof callbacks.onRequestStart === 'function'
    ? new ControllerWaiter(callbacks, started, settle)
    : new AbortWaiter(callbacks, started, settle);
}
