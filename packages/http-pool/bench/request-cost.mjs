// What connection-pool telemetry costs an outgoing HTTP request, as ratios measured in one
// process (never an absolute figure): undici `pool.request` to a node:http server on
// 127.0.0.1 (in this process, so its work is in both sides) through a pool of 4 connections.
// Both sides use the same pool and the same sockets; only telemetry differs:
//   off  the pool itself, no subscriber (what an application gets when nothing exports)
//   on   a real SDK MeterProvider, the `undici:request:create` subscriber and `observe(pool)`
// Rows:
//   noise      off against off: how far apart two identical sides land on this machine now
//   serial     one request at a time: nothing queues, the common case.
//   contended  32 requests in flight: almost every request queues and records a point, so
//              this adds the SDK's histogram.record per request.
//   added work the telemetry's own work per request that did not queue, timed alone without
//              I/O (a stand-in pool that calls the handler and publishes the channel event as
//              undici does), as a share of the serial baseline's CPU per request. Budget: the
//              request costs ≤ 1.02× with it. This row is the verdict: the end-to-end rows
//              above move by as much as the noise row shows on a busy machine.
// See bench/README.md.
//
// Run: npm run build && npm run bench -w @gym/http-pool

import { channel } from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Pool } from 'undici';
import { bestNsPerCall, medianAsyncRatio } from '../../../scripts/bench/measure.mjs';
import { startHttpPoolTelemetry } from '../dist/index.js';

const OPS = Number(process.env.BENCH_OPS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 41);
const BUDGET = 1.02;

class PullReader extends MetricReader {
  async onShutdown() {}
  async onForceFlush() {}
}

const server = createServer((_request, response) => response.end('ok'));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
const pool = new Pool(origin, { connections: 4 });
const reader = new PullReader();
const meterProvider = new MeterProvider({ readers: [reader] });

async function drive(dispatcher, inFlight) {
  let next = 0;
  const worker = async () => {
    while (next < OPS) {
      next += 1;
      const { body } = await dispatcher.request({ method: 'GET', path: '/' });
      await body.text();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

// Telemetry is started before each "on" round and stopped after it, outside the timing: the
// SDK's instrument set-up is a once-per-process cost, and the "off" rounds must see no subscriber.
let telemetryOn;
let observed;
const setUp = () => {
  telemetryOn = startHttpPoolTelemetry({ meterProvider, destinations: { [origin]: 'bench' } });
  observed = telemetryOn.observe(pool, origin);
};
const tearDown = () => telemetryOn.stop();

let ok = true;
let baselineSerialCpuNs = 0;
for (const [name, inFlight, run] of [
  ['noise', 1, () => drive(pool, 1)],
  ['serial', 1, () => drive(observed, 1)],
  ['contended', 32, () => drive(observed, 32)],
]) {
  await drive(pool, inFlight);
  setUp();
  await run();
  tearDown();
  const { cpuRatio, wallRatio, baselineCpuNs } = await medianAsyncRatio({
    setUp: name === 'noise' ? undefined : setUp,
    tearDown: name === 'noise' ? undefined : tearDown,
    run,
    baseline: () => drive(pool, inFlight),
    ops: OPS,
    rounds: ROUNDS,
  });
  console.log(
    `${name.padEnd(9)} ${name === 'noise' ? 'off / off' : 'on / off '}: ${cpuRatio.toFixed(3)}× CPU, ${wallRatio.toFixed(3)}× wall, per request (baseline ${(baselineCpuNs / 1000).toFixed(1)} µs CPU)`,
  );
  if (name === 'serial') baselineSerialCpuNs = baselineCpuNs;
}

// The added work alone: a stand-in pool whose dispatch does what undici does for a request
// that finds a free connection (publish the create event, then call the handler through).
const create = channel('undici:request:create');
const request = { origin };
const chunk = Buffer.from('ok');
const standIn = {
  stats: { queued: 0 },
  dispatch(_options, handler) {
    if (create.hasSubscribers) create.publish({ request });
    handler.onConnect(() => {});
    handler.onHeaders(200, [], () => {}, 'OK');
    handler.onData(chunk);
    handler.onComplete([]);
    return true;
  },
};
const handler = { onConnect() {}, onHeaders() {}, onData() {}, onComplete() {}, onError() {} };
const size = { calls: 200_000, rounds: 15 };
const offNs = bestNsPerCall(() => standIn.dispatch({}, handler), size);
const telemetry = startHttpPoolTelemetry({ meterProvider, destinations: { [origin]: 'bench' } });
const observedStandIn = telemetry.observe(standIn, origin);
const onNs = bestNsPerCall(() => observedStandIn.dispatch({}, handler), size);
telemetry.stop();
const addedNs = onNs - offNs;
const ratio = 1 + addedNs / baselineSerialCpuNs;
ok = ratio <= BUDGET;
console.log(
  `added work ${addedNs.toFixed(0)} ns per request that did not queue: ${ratio.toFixed(4)}× a serial request (${(baselineSerialCpuNs / 1000).toFixed(1)} µs CPU) ${ok ? `(budget ${BUDGET}×: ok)` : `(over the ${BUDGET}× budget)`}`,
);

const { resourceMetrics } = await reader.collect();
const points = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map((m) => m.dataPoints.length);
if (points.reduce((a, b) => a + b, 0) === 0)
  throw new Error('telemetry on recorded nothing: the benchmark measured nothing');
await Promise.all([pool.close(), meterProvider.shutdown()]);
server.close();
if (!ok) process.exitCode = 1;
