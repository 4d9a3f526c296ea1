// The two ways a metered limit turns a caller away. Both are thrown before the caller holds a
// slot, and both carry a `code`, because `instanceof` fails across two copies of this package
// in one process; a server maps either to "503, try again later".

/** A wait for a slot of a metered limit lasted longer than its `admissionTimeoutMs`. */
export class AdmissionTimeoutError extends Error {
  override readonly name = 'AdmissionTimeoutError';
  /** Stable across copies and versions of the package. */
  readonly code = 'GYM_ADMISSION_TIMEOUT' as const;

  constructor(
    /** The metered limit's name. */
    readonly limitName: string,
    /** Its admission timeout, in milliseconds. */
    readonly timeoutMs: number,
  ) {
    super(`${limitName}: no slot became free within the admission timeout of ${timeoutMs} ms`);
  }
}

/** A call found `maxQueued` calls already waiting for a slot of a metered limit and was refused at once. */
export class AdmissionRejectedError extends Error {
  override readonly name = 'AdmissionRejectedError';
  /** Stable across copies and versions of the package. */
  readonly code = 'GYM_ADMISSION_REJECTED' as const;

  constructor(
    /** The metered limit's name. */
    readonly limitName: string,
    /** Its queue bound. */
    readonly maxQueued: number,
  ) {
    super(`${limitName}: the queue is full (${maxQueued} waiting); refused without waiting`);
  }
}
