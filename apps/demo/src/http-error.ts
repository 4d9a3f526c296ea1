// Every refusal the server makes is an HttpError with a status and a sentence a person can
// act on. Routes throw it; the one dispatcher turns it into JSON, so no route can forget
// to answer or answer twice.

/** The status of an admission refusal (with `Retry-After`). */
export const OVERLOADED_STATUS = 503;

/** How an overload refusal's message (`{"error": "overloaded: …"}`) begins. */
export const OVERLOADED_MESSAGE = 'overloaded: ';

/**
 * Whether an answer is an overload refusal, by what it says: a `Retry-After` and a JSON error
 * that begins `overloaded: `. Its status number alone cannot tell: 429 is also the sandbox
 * quota's, which is no refusal to retry but a limit the caller decides about.
 */
export function isOverloadRefusal(retryAfter: string | undefined, body: string): boolean {
  if (retryAfter === undefined || !/^\d+$/.test(retryAfter.trim())) return false;
  try {
    const error = (JSON.parse(body) as { error?: unknown } | null)?.error;
    return typeof error === 'string' && error.startsWith(OVERLOADED_MESSAGE);
  } catch {
    return false;
  }
}

/** An error that becomes an HTTP response with this status and message. */
export class HttpError extends Error {
  /** HTTP status code (4xx for the client's mistakes, 5xx for ours or an upstream's). */
  readonly status: number;
  /** Extra response headers (e.g. `Allow` on a 405). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.headers = headers;
  }
}

/** The error a body throws when its client went away; `resourcesOperation` records `cancelled`. */
export function clientGoneError(): DOMException {
  return new DOMException('the client closed the connection', 'AbortError');
}
