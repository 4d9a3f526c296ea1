// What connection-pool telemetry costs an outgoing HTTP request, as ratios measured in one
// process (never an absolute figure): undici `pool.request` to a node:http server on
// 127.0.0.1 (in this process, so its work is in both sides) through a pool of 4 connections.
// Both sides use the same pool and the same sockets; only telemetry differs:
//   off  the pool itself, no subscriber (what an application gets when nothing exports)
//   on   a real SDK MeterProvider, the `undici:request:create` subscriber and `observe(pool)`
// Rows:
//   noise      off against off: how far apart two identical sides land on this machine now
//   serial     one request at a time: nothing queues, the common case. Budget ≤ 1.02×.
//   contended  32 requests in flight: almost every request queues and records a point, so
//              this adds the SDK's histogram.record per request. Reported, no budget.
// See bench/README.md.
//
// Run: npm run build && npm run bench -w @gym/http-pool

import { createServer } from 'node:http';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Pool } from 'undici';
import { medianAsyncRatio } from '../../../scripts/bench/measure.mjs';
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

/** One round with telemetry on: started, used and stopped again (the off side has no subscriber). */
async function driveObserved(inFlight) {
  const telemetry = startHttpPoolTelemetry({ meterProvider, destinations: { [origin]: 'bench' } });
  await drive(telemetry.observe(pool, origin), inFlight);
  telemetry.stop();
}

let ok = true;
for (const [name, inFlight, budget, run] of [
  ['noise', 1, undefined, () => drive(pool, 1)],
  ['serial', 1, BUDGET, () => driveObserved(1)],
  ['contended', 32, undefined, () => driveObserved(32)],
]) {
  await drive(pool, inFlight);
  await run();
  const { cpuRatio, wallRatio, baselineCpuNs } = await medianAsyncRatio({
    run,
    baseline: () => drive(pool, inFlight),
    ops: OPS,
    rounds: ROUNDS,
  });
  const verdict =
    budget === undefined ? '' : cpuRatio <= budget ? ` (budget ${budget}×: ok)` : ` (over the ${budget}× budget)`;
  console.log(
    `${name.padEnd(9)} ${name === 'noise' ? 'off / off' : 'on / off '}: ${cpuRatio.toFixed(3)}× CPU, ${wallRatio.toFixed(3)}× wall, per request (baseline ${(baselineCpuNs / 1000).toFixed(1)} µs CPU)${verdict}`,
  );
  if (budget !== undefined && cpuRatio > budget) ok = false;
}

const { resourceMetrics } = await reader.collect();
const points = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map((m) => m.dataPoints.length);
if (points.reduce((a, b) => a + b, 0) === 0)
  throw new Error('telemetry on recorded nothing: the benchmark measured nothing');
await Promise.all([pool.close(), meterProvider.shutdown()]);
server.close();
if (!ok) process.exitCode = 1;
