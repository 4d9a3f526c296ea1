// Two copies of @gym/observer in one process (an install that did not deduplicate it) share one
// sampler per meter (each caller with its own handle) and never count a request twice. Real copies: the built package copied
// twice into a temporary directory, loaded by a plain node child.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyBuiltPackage, linkDirectory, REPO_ROOT } from '@gym/test-kit';
import { expect, it } from '@jest/globals';

const SCRIPT = `
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
const a = await import('./a/dist/index.js');
const b = await import('./b/dist/index.js');
class Reader extends MetricReader { async onShutdown() {} async onForceFlush() {} }
const reader = new Reader();
const meterProvider = new MeterProvider({ readers: [reader] });
// One sampler between the two copies: each GC pause is recorded once, not once per copy. This
// count and the samplers start (and below stop) in one synchronous step, so they get the same
// gc entries: Node hands entries to observers only between turns of the event loop.
let seen = 0;
const own = new PerformanceObserver((list) => { seen += list.getEntries().length; });
const first = a.startObserver({ meterProvider });
const second = b.startObserver({ meterProvider });
own.observe({ entryTypes: ['gc'] });
// Node delivers gc entries from an unref'd task, so a loop with nothing else to do may end before
// one arrives. Collect, then yield one turn (a ref'd immediate keeps the loop alive), until an
// entry is seen; the count guards against a Node that never reports one.
for (let collections = 0; seen === 0; collections += 1) {
  if (collections === 1000) throw new Error('no gc entry seen after 1000 collections');
  globalThis.gc();
  await new Promise((resolve) => setImmediate(resolve));
}
first.stop(); second.stop(); own.disconnect();
const gcRecords = (await reader.collect()).resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)
  .filter((m) => m.descriptor.name === 'v8js.gc.duration')
  .flatMap((m) => m.dataPoints).reduce((n, p) => n + p.value.count, 0);
let arrived;
const arrival = new Promise((resolve) => { arrived = resolve; });
const server = createServer((_req, res) => arrived(res));
const untrackA = a.trackInFlight(server, { serverName: 'copies', meterProvider });
const untrackB = b.trackInFlight(server, { serverName: 'copies', meterProvider });
server.listen(0, '127.0.0.1');
await once(server, 'listening');
let peak = 0;
const inFlight = async () => {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'gym.server.requests.in_flight');
  return metric?.dataPoints[0]?.value ?? 0;
};
const done = new Promise((resolve) => {
  const req = request({ port: server.address().port, host: '127.0.0.1', agent: false }, (res) => { res.resume(); res.on('end', resolve); });
  req.end();
});
const held = await arrival;
peak = await inFlight();
const closed = once(held, 'close');
held.end('ok');
await done;
await closed;
const after = await inFlight();
untrackA(); untrackB();
server.close();
process.stdout.write(JSON.stringify({ distinctModules: a.startObserver !== b.startObserver, ownHandles: first !== second, gcRecordedOnce: gcRecords === seen && seen > 0, sameUntrack: untrackA === untrackB, peak, after }));
`;

it('two copies share one sampler per meter (each with its own handle) and count each request once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gym-observer-copies-'));
  try {
    linkDirectory(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    copyBuiltPackage('observer', join(dir, 'a'));
    copyBuiltPackage('observer', join(dir, 'b'));
    writeFileSync(join(dir, 'main.mjs'), SCRIPT);
    // The timeout is a failure guard for a child that hangs; a loaded machine starts one slowly.
    const run = spawnSync(process.execPath, ['--expose-gc', join(dir, 'main.mjs')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({
      distinctModules: true,
      ownHandles: true,
      gcRecordedOnce: true,
      sameUntrack: true,
      peak: 1,
      after: 0,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
