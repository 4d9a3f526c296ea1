// Gym's startup timeline across real processes: the orchestrator's spans (in memory, in this
// process) and a real server child's spans (exported over OTLP to a receiver here) share one
// trace id, the server's `gym.server.startup` under the orchestrator's `gym.startup.server` for
// it, because the fleet passes that span's traceparent in the child's environment.

import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ENV_TRACEPARENT, SPAN_SERVER_STARTUP, SPAN_STARTUP, SPAN_STARTUP_SERVER } from '@gym/constants';
import { createSpanHarness, type SpanHarness } from '@gym/test-kit';
import { afterEach, beforeEach, expect, it } from '@jest/globals';
import { OrchestratorStartup } from '../src/startup-trace.js';
import { distFile, waitFor } from './support/processes.js';

/** The fields of one protobuf message: field number → values (varints as numbers, length-delimited as bytes). */
function fieldsOf(buffer: Buffer): Map<number, Array<number | Buffer>> {
  const fields = new Map<number, Array<number | Buffer>>();
  let at = 0;
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = buffer[at++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
  };
  while (at < buffer.length) {
    const key = varint();
    const wireType = key % 8;
    let value: number | Buffer;
    if (wireType === 0) value = varint();
    else if (wireType === 2) {
      const length = varint();
      value = buffer.subarray(at, at + length);
      at += length;
    } else if (wireType === 1 || wireType === 5) {
      value = wireType === 1 ? 8 : 4;
      at += value;
    } else throw new Error(`wire type ${wireType} is not OTLP`);
    const number = Math.floor(key / 8);
    fields.set(number, [...(fields.get(number) ?? []), value]);
  }
  return fields;
}

const bytes = (fields: Map<number, Array<number | Buffer>>, field: number): Buffer[] =>
  (fields.get(field) ?? []).filter((value): value is Buffer => Buffer.isBuffer(value));

interface WireSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
}

/** The spans of an ExportTraceServiceRequest: resource_spans(1) → scope_spans(2) → spans(2). */
function spansOf(body: Buffer): WireSpan[] {
  return bytes(fieldsOf(body), 1).flatMap((resourceSpans) =>
    bytes(fieldsOf(resourceSpans), 2).flatMap((scopeSpans) =>
      bytes(fieldsOf(scopeSpans), 2).map((raw) => {
        const span = fieldsOf(raw);
        const hex = (field: number) => bytes(span, field)[0]?.toString('hex') ?? '';
        return {
          traceId: hex(1),
          spanId: hex(2),
          parentSpanId: hex(4),
          name: bytes(span, 5)[0]?.toString('utf8') ?? '',
        };
      }),
    ),
  );
}

let spans: SpanHarness;
let receiver: Server;
const received: WireSpan[] = [];
const saved = { ...process.env };

beforeEach(async () => {
  spans = createSpanHarness();
  received.length = 0;
  receiver = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces') received.push(...spansOf(Buffer.concat(chunks)));
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
});

afterEach(async () => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await spans.shutdown();
});

it('one trace id across the orchestrator and a real server child; the server span under its spawn-to-ready span', async () => {
  const { port } = receiver.address() as AddressInfo;
  // What the orchestrator's configureTelemetryEnv gives its servers, with OTLP to this receiver.
  Object.assign(process.env, {
    NEMO_GYM_OTEL_ENABLED: '1',
    NEMO_GYM_OTEL_EXPORTER: 'otlp',
    NEMO_GYM_OTEL_SPAN_GROUPS: 'default',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
  });
  delete process.env[ENV_TRACEPARENT];
  const { Fleet } = (await import(distFile('fleet.js'))) as typeof import('../src/fleet.js');
  const startup = new OrchestratorStartup(spans.tracer);
  startup.mark('init_telemetry');
  const fleet = await Fleet.start({
    count: 1,
    serverArgs: [],
    prometheus: false,
    onLog: () => {},
    onDeath: () => {},
    onRestarted: () => {},
    onRestartFailed: () => {},
    onSpawn: (name) => startup.spawned(name),
  });
  startup.mark('spawn_servers');
  startup.finish();
  // A clean stop flushes the server's spans (its batch processor would wait longer).
  await fleet.stop();

  const root = spans.spans(SPAN_STARTUP)[0]!;
  const perServer = spans.spans(SPAN_STARTUP_SERVER)[0]!;
  const traceId = root.spanContext().traceId;
  expect(perServer.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
  expect(
    spans
      .spans()
      .map((s) => s.name)
      .sort(),
  ).toEqual(
    [SPAN_STARTUP, SPAN_STARTUP_SERVER, `${SPAN_STARTUP}.init_telemetry`, `${SPAN_STARTUP}.spawn_servers`].sort(),
  );
  // Spawn-to-ready ends before the orchestrator's spawn stage does.
  expect(perServer.endTime <= root.endTime).toBe(true);

  const serverRoot = await waitFor(
    'the server child’s gym.server.startup span',
    () => received.find((span) => span.name === SPAN_SERVER_STARTUP),
    15_000,
  );
  expect(serverRoot.traceId).toBe(traceId);
  expect(serverRoot.parentSpanId).toBe(perServer.spanContext().spanId);
  const stages = received.filter((span) => span.name.startsWith(`${SPAN_SERVER_STARTUP}.`));
  expect(stages.map((span) => span.name)).toEqual(
    expect.arrayContaining(['parse_config', 'init_telemetry', 'listen'].map((s) => `${SPAN_SERVER_STARTUP}.${s}`)),
  );
  for (const stage of stages) {
    expect(stage.traceId).toBe(traceId);
    expect(stage.parentSpanId).toBe(serverRoot.spanId);
  }
  // One trace id across both processes.
  expect(
    new Set([...received.map((span) => span.traceId), ...spans.spans().map((s) => s.spanContext().traceId)]),
  ).toEqual(new Set([traceId]));
});
