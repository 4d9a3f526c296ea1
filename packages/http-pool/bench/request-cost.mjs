// What connection-pool telemetry costs an outgoing HTTP request, as ratios of CPU time measured
// in one process: undici `pool.request` to a node:http server on 127.0.0.1 (in this process, so
// its work is on both sides) through a pool of 4 connections. Every side uses the same pool and
// sockets:
//   off    the pool itself, nothing subscribed (what an application gets when nothing exports)
//   on     a real SDK MeterProvider, the `undici:request:create` subscriber and `observe(pool)`
//   floor  off, plus the data points alone: as many SDK `histogram.record` calls per round as
//          `on` records waits, on an instrument with the same buckets and the same attribute set
//   bare   the floor's points with no attribute
// Each row alternates its two sides in ABBA pairs and reports the median of the per-pair ratios
// and their quartiles. See bench/README.md for the rows and what they mean.
//
// Run: npm run build && npm run bench -w @gym/http-pool

import { channel } from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import {
  ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT,
  ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME,
  ATTR_HTTP_DESTINATION_SERVER_NAME,
  INSTRUMENTS,
} from '@gym/constants';
import { createInstrument } from '@gym/core/internal';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Pool } from 'undici';
import { bestNsPerCall, medianAsyncRatio } from '../../../scripts/bench/measure.mjs';
import { startHttpPoolTelemetry } from '../dist/index.js';

const OPS = Number(process.env.BENCH_OPS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 201);
const CONTENDED_BUDGET = 1.05;
const ADDED_BUDGET = 1.02;
const CONNECTIONS = 4;
const IN_FLIGHT = 32;

class PullReader extends MetricReader {
  async onShutdown() {}
  async onForceFlush() {}
}

const server = createServer((_request, response) => response.end('ok'));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
const pool = new Pool(origin, { connections: CONNECTIONS });
const reader = new PullReader();
const meterProvider = new MeterProvider({ readers: [reader] });
const destinations = { [origin]: 'bench' };

// The package's attribute set of a wait that got its connection, key for key.
const okAttributes = Object.freeze({
  [ATTR_HTTP_CONNECTION_POOL_QUEUE_CONSTRAINT]: 'per_host',
  [ATTR_HTTP_CONNECTION_POOL_QUEUE_OUTCOME]: 'ok',
  [ATTR_HTTP_DESTINATION_SERVER_NAME]: 'bench',
});
// The floor's instrument: the package's histogram (same name, unit and buckets) on a meter of its own.
const floorHistogram = createInstrument(meterProvider.getMeter('bench-floor'), INSTRUMENTS.httpPoolQueueDuration);

// No attribute: what the attribute set adds to a point, in place (`bare point`) and alone.
const noAttributes = Object.freeze({});

async function drive(dispatcher, inFlight, points = 0, pointMs = 0, attributes = okAttributes) {
  let next = 0;
  let recorded = 0;
  const worker = async () => {
    while (next < OPS) {
      next += 1;
      const { body } = await dispatcher.request({ method: 'GET', path: '/' });
      await body.text();
      if (recorded < points) {
        recorded += 1;
        floorHistogram.record(pointMs, attributes);
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

// Telemetry starts before each "on" round and stops after it, outside the timing: the "off"
// rounds must see no subscriber.
let telemetry;
let observed;
const setUp = () => {
  telemetry = startHttpPoolTelemetry({ meterProvider, destinations });
  observed = telemetry.observe(pool, origin, { connections: CONNECTIONS });
};
const tearDown = () => telemetry.stop();

const waitPoints = async () => {
  const { resourceMetrics } = await reader.collect();
  const points = resourceMetrics.scopeMetrics
    .filter((scope) => scope.scope.name === '@gym/http-pool')
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === INSTRUMENTS.httpPoolQueueDuration.name)
    .flatMap((metric) => metric.dataPoints);
  return {
    count: points.reduce((sum, point) => sum + point.value.count, 0),
    sum: points.reduce((sum, point) => sum + point.value.sum, 0),
  };
};

// How many waits a contended "on" round records, and their mean: what the floor records.
await drive(pool, IN_FLIGHT);
const before = await waitPoints();
const CALIBRATION = 5;
for (let round = 0; round < CALIBRATION; round += 1) {
  setUp();
  await drive(observed, IN_FLIGHT);
  tearDown();
}
const after = await waitPoints();
const waitsPerRound = Math.round((after.count - before.count) / CALIBRATION);
const meanWaitMs = (after.sum - before.sum) / (after.count - before.count);
if (!(waitsPerRound > 0)) throw new Error('the contended rounds recorded no wait: the benchmark measures nothing');
console.log(
  `a contended round: ${waitsPerRound} of ${OPS} requests wait (mean ${meanWaitMs.toFixed(2)} ms); the floor records as many points`,
);

const off = (inFlight) => () => drive(pool, inFlight);
const on = (inFlight) => () => drive(observed, inFlight);
const floor = () => drive(pool, IN_FLIGHT, waitsPerRound, meanWaitMs);
const bareFloor = () => drive(pool, IN_FLIGHT, waitsPerRound, meanWaitMs, noAttributes);

// [row, sides, run, baseline, telemetry on in `run`, budget]
const ROWS = [
  ['noise', 'off / off', off(1), off(1), false],
  ['noise 32', 'off / off', off(IN_FLIGHT), off(IN_FLIGHT), false],
  ['noise floor', 'floor / floor', floor, floor, false],
  ['serial', 'on / off', on(1), off(1), true],
  ['contended', 'on / off', on(IN_FLIGHT), off(IN_FLIGHT), true],
  ['point floor', 'floor / off', floor, off(IN_FLIGHT), false],
  ['bare point', 'bare / off', bareFloor, off(IN_FLIGHT), false],
  ['contended / floor', 'on / floor', on(IN_FLIGHT), floor, true, CONTENDED_BUDGET],
];

let ok = true;
let serialCpuNs = 0;
console.log(`row                sides          CPU ratio (quartiles)    wall     baseline CPU`);
for (const [name, sides, run, baseline, telemetryOn, budget] of ROWS) {
  await baseline();
  if (telemetryOn) setUp();
  await run();
  if (telemetryOn) tearDown();
  const { cpuRatio, cpuQuartiles, wallRatio, baselineCpuNs } = await medianAsyncRatio({
    setUp: telemetryOn ? setUp : undefined,
    tearDown: telemetryOn ? tearDown : undefined,
    run,
    baseline,
    ops: OPS,
    rounds: ROUNDS,
  });
  const over = budget !== undefined && cpuRatio > budget;
  if (over) ok = false;
  const verdict = budget === undefined ? '' : ` budget ${budget}×: ${over ? 'OVER' : 'ok'}`;
  console.log(
    `${name.padEnd(18)} ${sides.padEnd(14)} ${cpuRatio.toFixed(3)}× (${cpuQuartiles.map((q) => q.toFixed(3)).join('–')})  ${wallRatio.toFixed(3)}×   ${(baselineCpuNs / 1000).toFixed(1)} µs${verdict}`,
  );
  if (name === 'serial') serialCpuNs = baselineCpuNs;
}

// The split, timed alone without I/O on a stand-in pool whose dispatch does what undici does.
// A request that finds a free connection: undici publishes the create event and starts it at once.
// A request that waits: the dispatch returns false with the pool over its connections, and the
// request starts later. Both read the real pool's counts where the package reads `stats`.
const create = channel('undici:request:create');
const request = { origin };
const chunk = Buffer.from('ok');
let held;
const complete = (handler) => {
  handler.onConnect(() => {});
  handler.onHeaders(200, [], () => {}, 'OK');
  handler.onData(chunk);
  handler.onComplete([]);
};
const standIn = (busy) => ({
  stats: {
    get size() {
      return pool.stats.size + (busy ? CONNECTIONS + 1 : 0);
    },
    queued: 0,
  },
  dispatch(_options, handler) {
    if (create.hasSubscribers) create.publish({ request });
    if (busy) {
      held = handler;
      return false;
    }
    complete(handler);
    return true;
  },
});
const handler = { onConnect() {}, onHeaders() {}, onData() {}, onComplete() {}, onError() {} };
const size = { calls: 200_000, rounds: 15 };
const timeStandIn = (busy, provider) => {
  const bare = standIn(busy);
  const send = (dispatcher) => () => {
    dispatcher.dispatch({}, handler);
    if (busy) complete(held);
  };
  const offNs = bestNsPerCall(send(bare), size);
  const started = startHttpPoolTelemetry({ meterProvider: provider, destinations });
  const onNs = bestNsPerCall(send(started.observe(bare, origin, { connections: CONNECTIONS })), size);
  started.stop();
  return onNs - offNs;
};
// A meter whose `record` does nothing: what is left of a wait is the package's own work.
const noSdk = {
  getMeter: () => ({
    createHistogram: () => ({ record() {} }),
    createObservableCounter: () => ({ addCallback() {}, removeCallback() {} }),
  }),
};
const noWaitNs = timeStandIn(false, meterProvider);
const oursPerWaitNs = timeStandIn(true, noSdk);
const pointNs = bestNsPerCall((i) => floorHistogram.record(i % 7, okAttributes), size);
const bareAttributesNs = bestNsPerCall((i) => floorHistogram.record(i % 7, noAttributes), size);
const addedRatio = 1 + noWaitNs / serialCpuNs;
if (addedRatio > ADDED_BUDGET) ok = false;
console.log(
  `added work, a request that did not wait: ${noWaitNs.toFixed(0)} ns, ${addedRatio.toFixed(4)}× a serial request (budget ${ADDED_BUDGET}×: ${addedRatio <= ADDED_BUDGET ? 'ok' : 'OVER'})`,
);
console.log(
  `a wait: the SDK's point ${pointNs.toFixed(0)} ns (${(pointNs - bareAttributesNs).toFixed(0)} ns of it its three attributes), the package's own work ${oursPerWaitNs.toFixed(0)} ns`,
);

await Promise.all([pool.close(), meterProvider.shutdown()]);
server.close();
if (!ok) process.exitCode = 1;
