// A metered limit that is no longer referenced stops being reported, and leaves nothing behind
// even when nobody collects (a limit made per request by mistake must not leak). Garbage
// collection is forced in a Node child process with --expose-gc, over the build output (`npm
// test` builds first), again and again until the finalizers have run (bounded by a guard).

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from '@jest/globals';

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL('../', import.meta.url));
let work = '';

const MAIN = `
import { createRequire } from 'node:module';
const require = createRequire(${JSON.stringify(join(PACKAGE, 'package.json'))});
const { AggregationTemporality, MeterProvider, MetricReader } = await import(require.resolve('@opentelemetry/sdk-metrics'));
const { Semaphore } = await import(require.resolve('async-mutex'));
const { meteredLimit } = await import(${JSON.stringify(join(PACKAGE, 'dist', 'index.js'))});

class Reader extends MetricReader {
  constructor(temporality) { super({ aggregationTemporalitySelector: () => temporality }); }
  async onShutdown() {} async onForceFlush() {}
}
// Delta: only what the callbacks observed in this collection. Cumulative: like Prometheus.
const delta = new Reader(AggregationTemporality.DELTA);
const cumulative = new Reader(AggregationTemporality.CUMULATIVE);
const meterProvider = new MeterProvider({ readers: [delta, cumulative] });
const base = { component: 'resources', meterProvider };

async function collect(reader) {
  const { resourceMetrics } = await reader.collect();
  const out = {};
  for (const metric of resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)) {
    for (const p of metric.dataPoints) {
      const name = p.attributes['nemo.gym.concurrency.limit_name'];
      (out[name] ??= {})[metric.descriptor.name.replace('gym.concurrency.', '')] = p.value;
    }
  }
  return out;
}
/**
 * Collects garbage until done() holds: finalizers run in a later task, and one collection may not
 * free everything, so it collects again each turn. The deadline is a failure guard only: the
 * state is printed either way and the parent's checks say what was left.
 */
async function collectGarbageUntil(done) {
  const deadline = performance.now() + 20_000;
  do {
    globalThis.gc();
    await new Promise((resolve) => setTimeout(resolve, 1));
  } while (!done() && performance.now() < deadline);
}
const { version } = require('./package.json');
/** Metered limits registered on this provider's meter for @gym/operations, read from the shared registry. */
function registered() {
  const registry = globalThis[Symbol.for('@gym/core.shared.v1')].get('@gym/operations/metered-limits@1');
  return registry.byMeter.get(meterProvider.getMeter('@gym/operations', version))?.entries.size ?? 0;
}

const kept = meteredLimit(new Semaphore(1), { ...base, limitName: 'kept' });
let perRequest = meteredLimit(new Semaphore(2), { ...base, limitName: 'per_request' });
await perRequest.run(() => 1);
// Two limits of one attribute set; one refuses a call, then goes away: the set's counter must not go back.
const survivor = meteredLimit(new Semaphore(1), { ...base, limitName: 'pair', maxQueued: 0 });
let leaver = meteredLimit(new Semaphore(1), { ...base, limitName: 'pair', maxQueued: 0 });
let release;
const holding = leaver.run(() => new Promise((resolve) => { release = resolve; }));
await leaver.run(() => 'refused').catch(() => {});
release();
await holding;

// Cumulative first, always: both readers share the SDK's storage, and a delta reader also receives
// what was observed while the other one collected.
const beforeCumulative = await collect(cumulative);
const before = { delta: await collect(delta), cumulative: beforeCumulative };
perRequest = undefined;
leaver = undefined;
await collectGarbageUntil(() => registered() === 2); // kept and the pair's survivor
const afterCumulative = await collect(cumulative);
const after = { delta: await collect(delta), cumulative: afterCumulative };

// A thousand limits made and dropped without any collection in between: nothing is left of them.
const registeredBefore = registered();
for (let i = 0; i < 1000; i++) meteredLimit(new Semaphore(1), { ...base, limitName: 'leaky' }).state();
const registeredWithLeaks = registered();
await collectGarbageUntil(() => registered() === registeredBefore);
const registeredAfterGc = registered(); // no collection happened: the finalizers dropped them
await collect(cumulative);
const afterLeak = await collect(delta);

console.log(JSON.stringify({
  before, after, afterLeak, registeredBefore, registeredWithLeaks, registeredAfterGc,
  keptState: kept.state(), survivorState: survivor.state(),
}));
`;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'gym-operations-unreferenced-'));
  writeFileSync(join(work, 'main.mjs'), MAIN);
});

afterAll(() => {
  if (work !== '') rmSync(work, { recursive: true, force: true });
});

it('a metered limit no longer referenced stops being reported; its counters stay in its set while others live; none leak', async () => {
  // The timeouts are failure guards: a loaded machine starts a child slowly.
  const { stdout } = await run(process.execPath, ['--expose-gc', join(work, 'main.mjs')], {
    cwd: work,
    timeout: 80_000,
  });
  const result = JSON.parse(stdout) as Record<string, Record<string, Record<string, Record<string, number>>>>;
  const { before, after } = result as unknown as {
    before: { delta: Record<string, Record<string, number>>; cumulative: Record<string, Record<string, number>> };
    after: { delta: Record<string, Record<string, number>>; cumulative: Record<string, Record<string, number>> };
  };
  expect(Object.keys(before.delta).sort()).toEqual(['kept', 'pair', 'per_request']);
  expect(before.delta.pair).toMatchObject({ limit: 2, admission_rejected_total: 1 });

  // Gone: no point observed for per_request any more (a delta reader shows what was observed).
  expect(Object.keys(after.delta).sort()).toEqual(['kept', 'pair']);
  // The pair's set lost one limit but not its refusal: the cumulative counter never goes back.
  expect(after.cumulative.pair).toMatchObject({ limit: 1, admission_rejected_total: 1 });
  expect(after.delta.pair).toMatchObject({ limit: 1 });
  // A thousand dropped limits: none is reported, nothing of them is left.
  const leak = result as unknown as {
    afterLeak: Record<string, unknown>;
    registeredBefore: number;
    registeredWithLeaks: number;
    registeredAfterGc: number;
  };
  expect(leak.registeredBefore).toBe(2); // kept and the pair's survivor
  expect(leak.registeredWithLeaks).toBe(1002);
  expect(leak.registeredAfterGc).toBe(2);
  expect(Object.keys(leak.afterLeak).sort()).toEqual(['kept', 'pair']);
}, 90_000);
