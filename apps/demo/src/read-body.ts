// Reads a JSON body with a hard byte cap, checked on the declared length first and on the
// bytes actually received second, so a liar or a slow-loris client cannot make the server
// buffer more than the cap. Parsing and schema checks come after the cap, never before.

import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { HttpError } from './http-error.js';

/** Largest accepted request body, in bytes. Every schema's strings fit well inside it. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Reads the raw body, refusing anything over `maxBytes` with a 413. Past the cap the rest
 * is drained and dropped rather than the socket destroyed, so the client can still read
 * the 413; the dispatcher closes the connection afterwards.
 */
export function readRawBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    req.resume();
    return Promise.reject(new HttpError(413, `request body is ${declared} bytes; the limit is ${maxBytes} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const settle = (error: Error | undefined): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      if (error === undefined) resolve(Buffer.concat(chunks, received));
      else {
        req.resume();
        reject(error);
      }
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) settle(new HttpError(413, `request body exceeds the limit of ${maxBytes} bytes`));
      else chunks.push(chunk);
    };
    const onEnd = (): void => settle(undefined);
    const onGone = (): void => settle(new HttpError(499, 'the client closed the connection before sending its body'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

/** Refuses malformed UTF-8 rather than replacing it with U+FFFD. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** True for `application/json`, with or without parameters (`; charset=utf-8`), in any case; not `application/json-patch+json`. */
export function isJsonMediaType(contentType: string): boolean {
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return mediaType === 'application/json';
}

/** Reads, parses and validates a JSON body against `schema`; every failure is a 4xx naming the problem. */
export async function readJsonBody<S extends z.ZodType>(req: IncomingMessage, schema: S): Promise<z.output<S>> {
  const type = req.headers['content-type'] ?? '';
  if (!isJsonMediaType(type)) {
    throw new HttpError(
      415,
      `content-type must be application/json (got ${type === '' ? 'none' : JSON.stringify(type)})`,
    );
  }
  const raw = await readRawBody(req);
  let text: string;
  try {
    text = strictUtf8.decode(raw);
  } catch {
    throw new HttpError(400, 'body is not valid UTF-8');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `body is not valid JSON: ${(error as Error).message}`);
  }
  const result = schema.safeParse(parsed);
  if (!result.success) {
    const problems = result.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'body'}: ${issue.message}`);
    throw new HttpError(400, `invalid body: ${problems.join('; ')}`);
  }
  return result.data;
}
