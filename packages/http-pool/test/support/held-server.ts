// A real node:http server on 127.0.0.1 whose responses wait until the test releases them, so
// a pool of one connection is busy for exactly as long as the test says: queueing is forced
// by the test, never by the machine's speed.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HeldServer {
  readonly origin: string;
  /** Paths of the requests the server has received, in order. */
  readonly received: string[];
  /** Answers the oldest held request (200, its path as the body). */
  releaseOne(): void;
  /** Answers every held request, and every later one at once. */
  releaseAll(): void;
  close(): Promise<void>;
}

export async function startHeldServer(
  route?: (request: IncomingMessage, response: ServerResponse) => boolean,
): Promise<HeldServer> {
  const received: string[] = [];
  const held: (() => void)[] = [];
  let open = false;
  const server: Server = createServer((request, response) => {
    received.push(request.url ?? '');
    if (route?.(request, response)) return;
    const answer = () => response.end(request.url ?? '');
    if (open) answer();
    else held.push(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    received,
    releaseOne() {
      held.shift()?.();
    },
    releaseAll() {
      open = true;
      for (const answer of held.splice(0)) answer();
    },
    close() {
      open = true;
      for (const answer of held.splice(0)) answer();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
