// What connection-pool telemetry costs an outgoing HTTP request, as ratios measured in one
// process (never an absolute figure): undici `pool.request` to a node:http server on
// 127.0.0.1 (in this process, so its work is in both sides) through a pool of 4 connections.
// Both sides use the same pool and the same sockets; only telemetry differs:
//   off  the pool itself, no subscriber (what an application gets when nothing exports)
//   on   a real SDK MeterProvider, the `undici:request:create` subscriber and `observe(pool)`
// Rows (the two A/A rows first: read every other row against them):
//   noise          off against off, one request at a time: how far apart two identical sides
//                  land on this machine now
//   noise 32       the same with 32 requests in flight
//   serial         one request at a time: nothing waits, the common case.
//   contended      32 requests in flight through 4 connections: almost every request waits
//                  and records a point, so this adds the SDK's histogram.record per request.
//   contended, no SDK  the same with a meter whose `record` does nothing: the package's own
//                  work for a request that waits, without the SDK's point.
//   contended / point  the contended row against the bare pool plus the data point alone (one
//                  SDK histogram.record per request, with the package's attributes): what a
//                  request that waits costs beyond its point. Budget: ≤ 1.05×.
//   added work     the telemetry's own work per request that did not wait, timed alone without
//                  I/O (a stand-in pool that calls the handler and publishes the channel event as
//                  undici does, and reads the real pool's `stats`), as a share of the serial
//                  baseline's CPU per request. Budget: the request costs ≤ 1.02× with it.
// See bench/README.md.
//
// Run: npm run build && npm run bench -w @gym/http-pool

import { channel } from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import {
  ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT,
  ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME,
  ATTR_HTTP_DESTINATION_SERVER_NAME,
} from '@gym/constants';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Pool } from 'undici';
import { bestNsPerCall, medianAsyncRatio } from '../../../scripts/bench/measure.mjs';
import { startHttpPoolTelemetry } from '../dist/index.js';

const OPS = Number(process.env.BENCH_OPS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 41);
const BUDGET = 1.02;
const CONTENDED_BUDGET = 1.05;

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
// A meter that records nothing: what is left of the contended row is the package's own work.
const noSdk = {
  getMeter: () => ({
    createHistogram: () => ({ record() {} }),
    createObservableCounter: () => ({ addCallback() {}, removeCallback() {} }),
  }),
};

// The data point alone, without this package: the SDK's histogram.record with the package's
// attribute set (same keys and values), once per request of the bare pool.
const point = meterProvider.getMeter('bench-point').createHistogram('bench.point', { unit: 'ms' });
const pointAttributes = Object.freeze({
  [ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT]: 'per_host',
  [ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME]: 'ok',
  [ATTR_HTTP_DESTINATION_SERVER_NAME]: 'bench',
});

async function drive(dispatcher, inFlight, recordPoint = false) {
  let next = 0;
  const worker = async () => {
    while (next < OPS) {
      next += 1;
      const { body } = await dispatcher.request({ method: 'GET', path: '/' });
      await body.text();
      if (recordPoint) point.record(performance.now() % 100, pointAttributes);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

// Telemetry is started before each "on" round and stopped after it, outside the timing: the
// SDK's instrument set-up is a once-per-process cost, and the "off" rounds must see no subscriber.
let telemetryOn;
let observed;
const setUpWith = (provider) => () => {
  telemetryOn = startHttpPoolTelemetry({ meterProvider: provider, destinations: { [origin]: 'bench' } });
  observed = telemetryOn.observe(pool, origin, { connections: 4 });
};
const tearDown = () => telemetryOn.stop();
const bare = (inFlight) => () => drive(pool, inFlight);
const on = (inFlight) => () => drive(observed, inFlight);

// [row, sides, telemetry's meter provider (none: off on both sides), run, baseline, budget]
const ROWS = [
  ['noise', 'off / off', undefined, bare(1), bare(1)],
  ['noise 32', 'off / off', undefined, bare(32), bare(32)],
  ['serial', 'on / off', meterProvider, on(1), bare(1)],
  ['contended', 'on / off', meterProvider, on(32), bare(32)],
  ['contended, no SDK', 'on / off', noSdk, on(32), bare(32)],
  ['contended / point', 'on / point', meterProvider, on(32), () => drive(pool, 32, true), CONTENDED_BUDGET],
];

let ok = true;
let baselineSerialCpuNs = 0;
for (const [name, sides, provider, run, baseline, budget] of ROWS) {
  const setUp = provider === undefined ? undefined : setUpWith(provider);
  await baseline();
  setUp?.();
  await run();
  if (setUp) tearDown();
  const { cpuRatio, wallRatio, baselineCpuNs } = await medianAsyncRatio({
    setUp,
    tearDown: setUp && tearDown,
    run,
    baseline,
    ops: OPS,
    rounds: ROUNDS,
  });
  const verdict =
    budget === undefined ? '' : cpuRatio <= budget ? ` (budget ${budget}×: ok)` : ` (over the ${budget}× budget)`;
  if (budget !== undefined && cpuRatio > budget) ok = false;
  console.log(
    `${name.padEnd(17)} ${sides.padEnd(10)}: ${cpuRatio.toFixed(3)}× CPU, ${wallRatio.toFixed(3)}× wall, per request (baseline ${(baselineCpuNs / 1000).toFixed(1)} µs CPU)${verdict}`,
  );
  if (name === 'serial') baselineSerialCpuNs = baselineCpuNs;
}

// The added work alone: a stand-in pool whose dispatch does what undici does for a request
// that finds a free connection (publish the create event, then call the handler through).
const create = channel('undici:request:create');
const request = { origin };
const chunk = Buffer.from('ok');
const standIn = {
  // The real pool's counts (4 idle connections after the rounds above): what a dispatch reads.
  get stats() {
    return pool.stats;
  },
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
const observedStandIn = telemetry.observe(standIn, origin, { connections: 4 });
const onNs = bestNsPerCall(() => observedStandIn.dispatch({}, handler), size);
telemetry.stop();
const addedNs = onNs - offNs;
const ratio = 1 + addedNs / baselineSerialCpuNs;
if (ratio > BUDGET) ok = false;
console.log(
  `added work ${addedNs.toFixed(0)} ns per request that did not wait: ${ratio.toFixed(4)}× a serial request (${(baselineSerialCpuNs / 1000).toFixed(1)} µs CPU) ${ratio <= BUDGET ? `(budget ${BUDGET}×: ok)` : `(over the ${BUDGET}× budget)`}`,
);

const { resourceMetrics } = await reader.collect();
const points = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map((m) => m.dataPoints.length);
if (points.reduce((a, b) => a + b, 0) === 0)
  throw new Error('telemetry on recorded nothing: the benchmark measured nothing');
await Promise.all([pool.close(), meterProvider.shutdown()]);
server.close();
if (!ok) process.exitCode = 1;
