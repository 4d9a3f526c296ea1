// Ratio benchmarks for @gym/operations, measured in one process (never absolute targets):
//   1. disabled resourcesOperation / the bare limit                        (target ≤ 1.05)
//   2. disabled resourcesOperation on a metered limit / on the same limit  (target ≤ 1.05)
//   3. enabled resourcesOperation / a hand-written floor                   (target ≤ 1.05)
//   4. noise: the bare limit against a second instance of itself (A/A)     (expected ≈ 1.00)
//   5. disabled, on a metered limit with an admission deadline / without   (target ≤ 1.10, serial)
//   6. enabled, on a metered limit that is exported / one that is not      (target ≤ 1.05)
//      (what its export adds to a call: the oldest-wait bookkeeping of the calls that wait)
// The floor is the same limit plus what exporting the same points needs at minimum on the same
// SDK: the clock reads, the two histogram.record calls (prebuilt attributes) and the live counts.
// Bodies are empty async functions: the worst case, where nothing hides the overhead.
// Each row runs in PROCESSES fresh child processes (BENCH_SAME_PROCESS=1: all in one process), so
// no row inherits the optimised code and type feedback of the rows before it, and no row rests on
// one process's compilation. In each, a variant runs warm-up rounds, then ROUNDS pairs of rounds
// interleaved ABBA with its baseline. Every round is timed in CPU time (the verdict) and wall
// time; the table shows the median CPU ns/op of each side and, for both measures, the median of
// the per-pair ratios of all its processes with their p25–p75. See bench/README.md.
//
// Run: npm run build && npm run bench --workspace=@gym/operations

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ATTR_EXECUTOR, ATTR_OPERATION, ATTR_OPERATION_OUTCOME, INSTRUMENTS } from '@gym/constants';
import { isMetricsExporting, setTelemetryState } from '@gym/core';
import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Mutex, Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { meteredLimit, resourcesOperation } from '../dist/index.js';

const OPS_PER_ROUND = Number(process.env.BENCH_OPS ?? 5_000);
/** A round of the baseline takes at least this much CPU time: more operations for a cheap limit. */
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 10);
/** Operations per round of the row being measured: OPS_PER_ROUND, or more (see `compare`). */
let opsPerRound = OPS_PER_ROUND;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 41);
const WARMUP_ROUNDS = 10;
/** Fresh processes per row, whose pairs are pooled. */
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 3);
/** Only rows whose label contains this text (e.g. BENCH_ONLY="p-limit"). */
const ONLY = process.env.BENCH_ONLY ?? '';
const OPTIONS = { operation: 'tool', executor: 'inline' };
const body = async () => 1;

// ---------------------------------------------------------------------------------------------
// Workloads: "serial" awaits one operation at a time (the limit is never contended);
// "contended" keeps 64 operations in flight through a limit of 8.

const SHAPES = {
  serial: { inFlight: 1, limit: 8 },
  contended: { inFlight: 64, limit: 8 },
};

async function drive(run, inFlight) {
  let next = 0;
  const worker = async () => {
    while (next < opsPerRound) {
      next++;
      await run();
    }
  };
  const workers = [];
  for (let i = 0; i < inFlight; i++) workers.push(worker());
  await Promise.all(workers);
}

/**
 * One round: wall time and CPU time of this process, per operation. Wall time is what a caller
 * waits; on a machine shared with other work it also holds every moment the scheduler gave the
 * CPU to another process, which lands on whichever side happened to be running. CPU time
 * (`process.cpuUsage`, all threads of this process) counts only the work done, so it is the
 * steadier measure of overhead; both are reported.
 */
async function timeRound(run, inFlight) {
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  await drive(run, inFlight);
  const wall = Number(process.hrtime.bigint() - start);
  const cpu = process.cpuUsage(cpu0);
  return { wall: wall / opsPerRound, cpu: ((cpu.user + cpu.system) * 1000) / opsPerRound };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
};

/** Median and spread of the per-pair ratios of one measure. */
function summarise(base, subject) {
  const ratios = subject.map((x, i) => x / base[i]);
  return {
    base: median(base),
    subject: median(subject),
    ratio: median(ratios),
    p25: quantile(ratios, 0.25),
    p75: quantile(ratios, 0.75),
  };
}

/**
 * Times `subject` against `base` in short paired rounds, alternating which goes first (ABBA:
 * slow drift, bursts of load and the garbage one side leaves for the next round hit both sides
 * alike). Both get the same warm-up, interleaved the same way. The ratio is the median of the
 * per-pair ratios; p25–p75 shows the noise.
 */
async function compare(makeBase, makeSubject, inFlight) {
  const base = makeBase();
  const subject = makeSubject();
  opsPerRound = OPS_PER_ROUND;
  globalThis.gc?.(); // start every row from a collected heap; no forced GC inside the rounds
  const warm = [];
  for (let i = 0; i < WARMUP_ROUNDS; i++) {
    // Halfway through the warm-up, size the rounds: a round of a cheap limit of OPS_PER_ROUND
    // calls took about 1.5 ms, where one garbage collection or interrupt moved a pair's ratio by
    // 10–20 %.
    if (i === WARMUP_ROUNDS / 2) {
      opsPerRound = Math.max(OPS_PER_ROUND, Math.ceil((ROUND_MS * 1e6) / median(warm)));
    }
    if (i % 2 === 0) {
      warm.push((await timeRound(base, inFlight)).cpu);
      await timeRound(subject, inFlight);
    } else {
      await timeRound(subject, inFlight);
      warm.push((await timeRound(base, inFlight)).cpu);
    }
  }
  const b = [];
  const s = [];
  for (let i = 0; i < ROUNDS; i++) {
    if (i % 2 === 0) {
      b.push(await timeRound(base, inFlight));
      s.push(await timeRound(subject, inFlight));
    } else {
      s.push(await timeRound(subject, inFlight));
      b.push(await timeRound(base, inFlight));
    }
  }
  return { base: b, subject: s };
}

/** The table's figures of pooled pairs. */
function summariseRow({ base, subject }) {
  return {
    wall: summarise(
      base.map((r) => r.wall),
      subject.map((r) => r.wall),
    ),
    cpu: summarise(
      base.map((r) => r.cpu),
      subject.map((r) => r.cpu),
    ),
  };
}

// ---------------------------------------------------------------------------------------------
// Limits, bare and through resourcesOperation.

// `inside(limit, fn)` runs fn inside the limit the way a user would without this package.
const LIMITS = {
  'p-limit': {
    make: (n) => pLimit(n),
    inside: (limit, fn) => limit(fn),
  },
  'Semaphore runExclusive': {
    make: (n) => new Semaphore(n),
    inside: (semaphore, fn) => semaphore.runExclusive(fn),
  },
  'Semaphore acquire': {
    make: (n) => new Semaphore(n),
    inside: async (semaphore, fn) => {
      const [, release] = await semaphore.acquire();
      try {
        return await fn();
      } finally {
        release();
      }
    },
  },
  'Mutex runExclusive': {
    make: () => new Mutex(),
    inside: (mutex, fn) => mutex.runExclusive(fn),
  },
  'acquire()/release()': {
    make: (n) => countingLimit(n),
    inside: async (limit, fn) => {
      const release = await limit.acquire();
      try {
        return await fn();
      } finally {
        release();
      }
    },
    capacity: (n) => n,
  },
};

/** The smallest honest acquire()/release() limit: acquire() resolves a release function. */
function countingLimit(size) {
  let free = size;
  const waiters = [];
  const grant = (resolve) => {
    free--;
    let released = false;
    resolve(() => {
      if (released) return;
      released = true;
      free++;
      const next = waiters.shift();
      if (next !== undefined) grant(next);
    });
  };
  return {
    acquire: () =>
      new Promise((resolve) => {
        if (free > 0) grant(resolve);
        else waiters.push(resolve);
      }),
  };
}

function throughOperation(limit) {
  return () => resourcesOperation(limit, OPTIONS, body);
}

// The floor: the least a hand-written measurement of the same limit does to export the same
// points as the operation. It reads the clock when asking, when holding and when done (three
// reads: two cannot give both a queue time and a run time), records both histograms with
// attribute objects built once, and keeps the live queued/active counts that the SDK reads at
// collection. On p-limit, a call that was queued when it was made is watched: p-limit 7's
// `clearQueue()` (with `rejectOnClear`) rejects it before it runs, and that wait must leave the
// queued count and record its queue time, as every cancelled wait does. A call p-limit started
// at once is not watched. `pendingCount` is read through p-limit's own getter, as the operation
// reads it. `exportedSame` checks that both sides exported the same points.
function floorOf(kind, limit, instruments) {
  const { queue, run, counts, attributes } = instruments;
  const inside = LIMITS[kind].inside;
  const okAttributes = { ...attributes, [ATTR_OPERATION_OUTCOME]: 'ok' };
  const measure = async (t0) => {
    const t1 = performance.now();
    counts.queued--;
    counts.active++;
    queue.record(t1 - t0, attributes);
    try {
      return await body();
    } finally {
      counts.active--;
      run.record(performance.now() - t1, okAttributes);
    }
  };
  if (kind !== 'p-limit') {
    return () => {
      counts.queued++;
      const t0 = performance.now();
      return inside(limit, () => measure(t0));
    };
  }
  const pending = Object.getOwnPropertyDescriptor(limit, 'pendingCount').get;
  return () => {
    counts.queued++;
    const t0 = performance.now();
    let held = false;
    const running = limit(() => {
      held = true;
      return measure(t0);
    });
    if (pending.call(limit) > 0) {
      running.then(undefined, () => {
        if (held) return;
        counts.queued--;
        queue.record(performance.now() - t0, attributes);
      });
    }
    return running;
  };
}

class PullReader extends MetricReader {
  async onShutdown() {}
  async onForceFlush() {}
}

// ---------------------------------------------------------------------------------------------

const fmt = (x, d = 0) => x.toFixed(d).padStart(8);

// Two ways to be off: nothing published and no SDK (a library used on its own: the exporting
// check reads two absent globals), and the state @gym/otel-bootstrap publishes when telemetry is
// disabled (one present global). The second is what a Gym server with telemetry off runs.
const OFF_STATES = {
  'disabled / bare': undefined,
  'off state / bare': { metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator: false },
};

/** Metrics on through a global SDK provider, once per process; the floor's instruments on it. */
let enabled;
function enableMetrics() {
  if (enabled !== undefined) return enabled;
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
  if (!isMetricsExporting()) throw new Error('benchmark could not turn metrics on');
  const floorMeter = provider.getMeter('bench-floor');
  const advice = { explicitBucketBoundaries: [...INSTRUMENTS.operationDuration.boundaries] };
  const counts = { queued: 0, active: 0 };
  const queued = floorMeter.createObservableUpDownCounter(`${INSTRUMENTS.operationQueued.name}.floor`);
  const active = floorMeter.createObservableUpDownCounter(`${INSTRUMENTS.operationActive.name}.floor`);
  const attributes = { [ATTR_OPERATION]: 'tool', [ATTR_EXECUTOR]: 'inline' };
  floorMeter.addBatchObservableCallback(
    (result) => {
      result.observe(queued, counts.queued, attributes);
      result.observe(active, counts.active, attributes);
    },
    [queued, active],
  );
  enabled = {
    reader,
    provider,
    instruments: {
      queue: floorMeter.createHistogram(`${INSTRUMENTS.operationQueueDuration.name}.floor`, { unit: 'ms', advice }),
      run: floorMeter.createHistogram(`${INSTRUMENTS.operationDuration.name}.floor`, { unit: 'ms', advice }),
      counts,
      attributes,
    },
  };
  return enabled;
}

/** Throws unless the floor exported the same points as the operation: as many queue and run times, and live counts. */
async function exportedSame(reader) {
  const { resourceMetrics } = await reader.collect();
  const points = new Map();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const point of metric.dataPoints) {
        const value = typeof point.value === 'number' ? point.value : point.value.count;
        points.set(metric.descriptor.name, (points.get(metric.descriptor.name) ?? 0) + value);
      }
    }
  }
  for (const name of [
    INSTRUMENTS.operationQueueDuration.name,
    INSTRUMENTS.operationDuration.name,
    INSTRUMENTS.operationQueued.name,
    INSTRUMENTS.operationActive.name,
  ]) {
    const ours = points.get(name);
    const floor = points.get(`${name}.floor`);
    if (ours === undefined || ours !== floor)
      throw new Error(`${name}: the operation exported ${ours}, the floor ${floor}`);
  }
}

function metricsOff(state) {
  if (enabled !== undefined) throw new Error('a metrics-off row cannot run after a metrics-on row');
  setTelemetryState(state);
  if (isMetricsExporting()) throw new Error('benchmark must run with metrics off');
}

/** Every row, in order: its label, its target and how it is measured. */
const ROWS = [];
for (const [test, state] of Object.entries(OFF_STATES)) {
  for (const [shapeName, shape] of Object.entries(SHAPES)) {
    for (const [kind, { make, inside }] of Object.entries(LIMITS)) {
      ROWS.push({
        test,
        kind,
        shape: shapeName,
        target: 1.05,
        measure: () => {
          metricsOff(state);
          return compare(
            () => {
              const limit = make(shape.limit);
              return () => inside(limit, body);
            },
            () => throughOperation(make(shape.limit)),
            shape.inFlight,
          );
        },
      });
    }
  }
}
for (const [shapeName, shape] of Object.entries(SHAPES)) {
  for (const [kind, { make, capacity }] of Object.entries(LIMITS)) {
    ROWS.push({
      test: 'metered / plain',
      kind,
      shape: shapeName,
      target: 1.05,
      measure: () => {
        metricsOff(undefined);
        return compare(
          () => throughOperation(make(shape.limit)),
          () =>
            throughOperation(
              meteredLimit(make(shape.limit), {
                component: 'resources',
                limitName: 'bench',
                capacity: capacity?.(shape.limit),
              }),
            ),
          shape.inFlight,
        );
      },
    });
  }
}
for (const [shapeName, shape] of Object.entries(SHAPES)) {
  for (const [kind, { make }] of Object.entries(LIMITS)) {
    ROWS.push({
      test: 'enabled / floor',
      kind,
      shape: shapeName,
      target: 1.05,
      measure: async () => {
        const { reader, instruments } = enableMetrics();
        const r = await compare(
          () => floorOf(kind, make(shape.limit), instruments),
          () => throughOperation(make(shape.limit)),
          shape.inFlight,
        );
        await exportedSame(reader); // the SDK really aggregated what was recorded, the same on both sides
        return r;
      },
    });
  }
}
// A deadline costs a call that finds a free slot nothing (no error, no timer): a metered limit
// with `admissionTimeoutMs` against the same without, metrics off, serial (every call finds a
// free slot; a call that waits pays its timer and the race, see bench/README.md).
for (const [shapeName, shape] of Object.entries({ serial: SHAPES.serial })) {
  for (const [kind, { make, capacity }] of Object.entries(LIMITS)) {
    const metered = (extra) => () =>
      throughOperation(
        meteredLimit(make(shape.limit), {
          component: 'resources',
          limitName: 'bench',
          capacity: capacity?.(shape.limit),
          ...extra,
        }),
      );
    ROWS.push({
      test: 'deadline / none',
      kind,
      shape: shapeName,
      target: 1.1,
      measure: () => {
        metricsOff(undefined);
        return compare(metered({}), metered({ admissionTimeoutMs: 60_000 }), shape.inFlight);
      },
    });
  }
}
// What exporting a metered limit adds to its calls (the oldest-wait bookkeeping of a waiting
// call), metrics on: a metered limit that is exported against one whose name is beyond the 64
// exported (it works the same, and is never exported). Both record their operations.
for (const [shapeName, shape] of Object.entries(SHAPES)) {
  for (const [kind, { make, capacity }] of Object.entries(LIMITS)) {
    ROWS.push({
      test: 'exported / not',
      kind,
      shape: shapeName,
      target: 1.05,
      measure: () => {
        const { provider } = enableMetrics();
        const metered = (limitName) =>
          meteredLimit(make(shape.limit), {
            component: 'resources',
            limitName,
            capacity: capacity?.(shape.limit),
            meterProvider: provider,
          });
        for (let i = 0; i < 63; i++) metered(`bench_${i}`).close();
        const exported = metered('bench');
        const unexported = metered('bench_beyond_the_64_exported');
        const options = { ...OPTIONS, meterProvider: provider };
        return compare(
          () => () => resourcesOperation(unexported, options, body),
          () => () => resourcesOperation(exported, options, body),
          shape.inFlight,
        );
      },
    });
  }
}
// The noise row: the same bare limit on both sides (two instances). Its spread is how far apart
// two identical sides land in this run; a ratio above is only meaningful beyond it.
for (const [shapeName, shape] of Object.entries(SHAPES)) {
  for (const kind of ['p-limit', 'Semaphore acquire', 'acquire()/release()']) {
    const { make, inside } = LIMITS[kind];
    const bare = () => {
      const limit = make(shape.limit);
      return () => inside(limit, body);
    };
    ROWS.push({
      test: 'noise (A/A)',
      kind,
      shape: shapeName,
      target: 1.05,
      measure: () => compare(bare, bare, shape.inFlight),
    });
  }
}
const labelOf = (row) => `${row.test} ${row.kind} ${row.shape}`;

if (isMetricsExporting()) throw new Error('benchmark must start with metrics off');

// A child runs one row and prints its result. The parent runs every selected row in a fresh
// child process (BENCH_SAME_PROCESS=1: all in this one), so that no row inherits the optimised
// code and type feedback the rows before it left behind: in one process, every later row runs
// `resourcesOperation` after it has seen every earlier limit kind (as a server that uses all of
// them would), while each bare baseline is a function of its own.
if (process.env.BENCH_ROW !== undefined) {
  const row = ROWS.find((r) => labelOf(r) === process.env.BENCH_ROW);
  if (row === undefined) throw new Error(`no row ${process.env.BENCH_ROW}`);
  process.stdout.write(JSON.stringify(await row.measure()));
  process.exit(0);
}
const selected = ROWS.filter((row) => labelOf(row).includes(ONLY));
const sameProcess = process.env.BENCH_SAME_PROCESS === '1';
const rows = [];
for (const row of selected) {
  const pairs = { base: [], subject: [] };
  for (let i = 0; i < (sameProcess ? 1 : PROCESSES); i++) {
    let result;
    if (sameProcess) {
      result = await row.measure();
    } else {
      const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
        env: { ...process.env, BENCH_ROW: labelOf(row) },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      if (child.status !== 0) throw new Error(`row ${labelOf(row)} failed (exit ${child.status})`);
      result = JSON.parse(child.stdout);
    }
    pairs.base.push(...result.base);
    pairs.subject.push(...result.subject);
  }
  rows.push({ ...row, ...summariseRow(pairs) });
}
if (sameProcess) metrics.disable();

console.log(
  `\n@gym/operations benchmark — node ${process.version}, ${OPS_PER_ROUND} ops/round or more (a baseline round ≥ ${ROUND_MS} ms of CPU), ${WARMUP_ROUNDS} warm-up + ` +
    `${ROUNDS} paired rounds (ABBA) per row and process, ${sameProcess ? 'all rows in one process' : `each row in ${PROCESSES} fresh processes, pairs pooled`}; ` +
    'ratio = median of per-pair ratios; empty async bodies.\n' +
    'cpu = CPU time of this process per op (the verdict); wall = elapsed time per op (includes time the machine gave to other work).\n',
);
console.log(
  `${'comparison'.padEnd(17)}${'limit'.padEnd(23)}${'workload'.padEnd(10)}` +
    `${'base cpu'.padStart(9)}${'ours cpu'.padStart(9)}${'cpu ratio'.padStart(10)}${'p25–p75'.padStart(11)}` +
    `${'wall ratio'.padStart(11)}${'p25–p75'.padStart(11)}  target`,
);
const spread = (m) => `${m.p25.toFixed(2)}–${m.p75.toFixed(2)}`.padStart(11);
for (const r of rows) {
  const verdict = r.cpu.ratio <= r.target ? 'ok' : 'MISSED';
  console.log(
    `${r.test.padEnd(17)}${r.kind.padEnd(23)}${r.shape.padEnd(10)}` +
      `${fmt(r.cpu.base).padStart(9)}${fmt(r.cpu.subject).padStart(9)}${r.cpu.ratio.toFixed(3).padStart(10)}${spread(r.cpu)}` +
      `${r.wall.ratio.toFixed(3).padStart(11)}${spread(r.wall)}  ≤${r.target.toFixed(2)} ${verdict}`,
  );
}
