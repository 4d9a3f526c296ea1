// How the gym-telemetry packages wait for a call they measure without changing it.

/** Called once with how a call ended: `ok` and its value, or not `ok` and what it threw or rejected with. */
export type Settled = (ok: boolean, outcome: unknown) => void;

const promiseThen = Promise.prototype.then;
type Then = (this: unknown, onFulfilled?: unknown, onRejected?: unknown) => unknown;

/**
 * Runs `run` and calls `settled` once it returned or threw, or what it returned settled. It never
 * calls a `then` the caller would not have called, so work that starts in `then` (a superagent
 * request, a mongoose `Query`, a knex builder) runs exactly as often as without telemetry.
 */
export function observeSettled<T>(run: () => T, settled: Settled): T {
  let result: T;
  try {
    result = run();
  } catch (error) {
    settled(false, error);
    throw error;
  }
  const thenable = result as T & { then?: unknown };
  const then = thenable?.then;
  if (typeof then !== 'function') {
    settled(true, result);
    return result;
  }
  let pending: Settled | undefined = settled;
  const once: Settled = (ok, outcome) => {
    pending?.(ok, outcome); // the first settlement only
    pending = undefined;
  };
  const forward =
    (original: Then): Then =>
    (onFulfilled, onRejected) => {
      try {
        return original.call(
          thenable,
          (value: unknown) => {
            once(true, value);
            return typeof onFulfilled === 'function' ? onFulfilled(value) : value;
          },
          (error: unknown) => {
            once(false, error);
            if (typeof onRejected === 'function') return onRejected(error);
            throw error;
          },
        );
      } catch (error) {
        once(false, error);
        throw error;
      }
    };
  // The built-in `then` starts nothing: a derived promise (a rejection nobody handles stays unhandled).
  if (then === promiseThen) return forward(promiseThen as Then)() as T;
  const own = Reflect.getOwnPropertyDescriptor(thenable, 'then');
  // biome-ignore lint/suspicious/noThenProperty: a Proxy may not replace a frozen own `then`
  if (own?.configurable === false && own.writable === false) return { then: forward(own.value as Then) } as T;
  // Any other thenable (execa's subprocess, a promise of another realm): the thenable in all but `then`.
  let original: unknown;
  let forwarding: Then | undefined;
  return new Proxy(thenable, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (key !== 'then' || typeof value !== 'function') return value;
      if (value !== original) {
        original = value;
        forwarding = forward(value as Then); // built once per `then`: `returned.then === returned.then`
      }
      return forwarding;
    },
  });
}
