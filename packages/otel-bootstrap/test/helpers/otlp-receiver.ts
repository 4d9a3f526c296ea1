// A local OTLP/HTTP receiver for tests: records every request body (gunzipped when the
// exporter compressed it) and answers 200 with an empty protobuf response, as a collector
// would, or the status set in `answer` (503: an outage the exporter retries through). Bound
// to 127.0.0.1 on an ephemeral port.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface OtlpRequest {
  readonly path: string;
  readonly contentType: string | undefined;
  readonly body: Buffer;
  /** The status it was answered with. */
  readonly status: number;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`, the value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly requests: OtlpRequest[];
  /** The status the next requests get (default 200). */
  answer: number;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: OtlpRequest[] = [];
  const state = { answer: 200 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      const status = state.answer;
      requests.push({ path: request.url ?? '', contentType: request.headers['content-type'], body, status });
      response.writeHead(status, { 'content-type': 'application/x-protobuf' });
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get answer() {
      return state.answer;
    },
    set answer(status: number) {
      state.answer = status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
