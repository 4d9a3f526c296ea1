// Every refusal the server makes is an HttpError with a status and a sentence a person can
// act on. Routes throw it; the one dispatcher turns it into JSON, so no route can forget
// to answer or answer twice.

/** The status of an admission refusal (with `Retry-After`); the load generator backs off on it. */
export const OVERLOADED_STATUS = 503;

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
