// The two ways a metered limit turns a caller away before it holds a slot. Each carries a
// `Symbol.for` brand its class checks, so `instanceof` works across two copies of the package.

const TIMEOUT = Symbol.for('@gym/operations/AdmissionTimeoutError');
const REJECTED = Symbol.for('@gym/operations/AdmissionRejectedError');

function branded(value: unknown, brand: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/** A wait for a slot of a metered limit lasted longer than its `admissionTimeoutMs`. */
export class AdmissionTimeoutError extends Error {
  override readonly name = 'AdmissionTimeoutError';
  readonly code = 'GYM_ADMISSION_TIMEOUT' as const;
  readonly [TIMEOUT] = true;

  constructor(
    readonly limitName: string,
    readonly timeoutMs: number,
  ) {
    super(`${limitName}: no slot became free within the admission timeout of ${timeoutMs} ms`);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return branded(value, TIMEOUT);
  }
}

/** A call found no free slot while `maxQueued` calls already waited, and was refused at once. */
export class AdmissionRejectedError extends Error {
  override readonly name = 'AdmissionRejectedError';
  readonly code = 'GYM_ADMISSION_REJECTED' as const;
  readonly [REJECTED] = true;

  constructor(
    readonly limitName: string,
    readonly maxQueued: number,
  ) {
    super(`${limitName}: the queue is full (${maxQueued} waiting); refused without waiting`);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return branded(value, REJECTED);
  }
}
