const BRAND = Symbol.for('@gym/operations/admission-error');

/** `instanceof` checks a `Symbol.for` brand (the class name), so it works across two copies of the package. */
abstract class AdmissionError extends Error {
  readonly [BRAND]: string = this.constructor.name;

  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass asked
    return (value as { [BRAND]?: unknown } | null | undefined)?.[BRAND] === this.name;
  }
}

/** A wait for a slot of a metered limit lasted longer than its `admissionTimeoutMs`. */
export class AdmissionTimeoutError extends AdmissionError {
  override readonly name = 'AdmissionTimeoutError';
  readonly code = 'GYM_ADMISSION_TIMEOUT' as const;

  constructor(
    readonly limitName: string,
    readonly timeoutMs: number,
  ) {
    super(`${limitName}: no slot became free within the admission timeout of ${timeoutMs} ms`);
  }
}

/** A call found no free slot while `maxQueued` calls already waited, and was refused at once. */
export class AdmissionRejectedError extends AdmissionError {
  override readonly name = 'AdmissionRejectedError';
  readonly code = 'GYM_ADMISSION_REJECTED' as const;

  constructor(
    readonly limitName: string,
    readonly maxQueued: number,
  ) {
    super(`${limitName}: the queue is full (${maxQueued} waiting); refused without waiting`);
  }
}
