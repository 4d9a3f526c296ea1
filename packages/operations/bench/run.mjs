// Ratio benchmarks for @gym/operations, measured in one process (never absolute targets):
//   1. disabled resourcesOperation / the bare limit                        (target ≤ 1.05)
//   2. disabled resourcesOperation on a metered limit / on the same limit  (target ≤ 1.05)
//   3. enabled resourcesOperation / a hand-written floor                   (target ≤ 1.10)
// The floor is the same limit plus the clock reads and the two histogram.record calls (with
// prebuilt attributes, on the same SDK) that measuring queue and run time needs at minimum.
// Bodies are empty async functions: the worst case, where nothing hides the overhead.
// Each variant runs warm-up rounds, then ROUNDS rounds interleaved with its baseline; the
// table shows the median ns/op, the ratio of medians, and the min–max of the per-round ratios.
// See bench/README.md for the method and how to read the table.
//
// Run: npm run build && npm run bench --workspace=@gym/operations

import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OUTCOME,
  METRIC_OPERATION_DURATION,
  METRIC_OPERATION_QUEUE_DURATION,
  OPERATION_BOUNDARIES_MS,
} from '@gym/constants';
import { isMetricsExporting, setTelemetryState } from '@gym/core';
import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Mutex, Semaphore } from 'async-mutex';
import pLimit from 'p-limit';
import { meteredLimit, resourcesOperation } from '../dist/index.js';

const OPS_PER_ROUND = Number(process.env.BENCH_OPS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const WARMUP_ROUNDS = 6;
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
    while (next < OPS_PER_ROUND) {
      next++;
      await run();
    }
  };
  const workers = [];
  for (let i = 0; i < inFlight; i++) workers.push(worker());
  await Promise.all(workers);
}

async function timeRound(run, inFlight) {
  const start = process.hrtime.bigint();
  await drive(run, inFlight);
  return Number(process.hrtime.bigint() - start) / OPS_PER_ROUND;
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

/**
 * Times `subject` against `base` in short paired rounds, alternating which goes first (the
 * machine is shared, so slow drift and bursts of load hit both sides of a pair alike). The ratio
 * is the median of the per-pair ratios; its min–max and interquartile range show the noise.
 */
async function compare(makeBase, makeSubject, inFlight) {
  const base = makeBase();
  const subject = makeSubject();
  globalThis.gc?.(); // start every row from a collected heap; no forced GC inside the rounds
  for (let i = 0; i < WARMUP_ROUNDS; i++) {
    await timeRound(base, inFlight);
    await timeRound(subject, inFlight);
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
  const ratios = s.map((x, i) => x / b[i]);
  return {
    base: median(b),
    subject: median(s),
    ratio: median(ratios),
    ratioMin: Math.min(...ratios),
    ratioMax: Math.max(...ratios),
    ratioP25: quantile(ratios, 0.25),
    ratioP75: quantile(ratios, 0.75),
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

// The floor: the least a hand-written measurement of the same limit does — read the clock when
// asking, when holding and when done (three reads: two cannot give both a queue time and a run
// time), and record both histograms with attribute objects built once.
function floorOf(kind, limit, histograms) {
  const { queue, run } = histograms;
  const inside = LIMITS[kind].inside;
  const attributes = { [ATTR_OPERATION]: 'tool', [ATTR_EXECUTOR]: 'inline' };
  const okAttributes = { ...attributes, [ATTR_OUTCOME]: 'ok' };
  const measured = (t0) => async () => {
    const t1 = performance.now();
    queue.record(t1 - t0, attributes);
    try {
      return await body();
    } finally {
      run.record(performance.now() - t1, okAttributes);
    }
  };
  return () => inside(limit, measured(performance.now()));
}

class PullReader extends MetricReader {
  async onShutdown() {}
  async onForceFlush() {}
}

// ---------------------------------------------------------------------------------------------

const fmt = (x, d = 0) => x.toFixed(d).padStart(8);
const rows = [];

if (isMetricsExporting()) throw new Error('benchmark must start with metrics off');
// Two ways to be off: nothing published and no SDK (a library used on its own: the exporting
// check reads two absent globals), and the state @gym/otel-bootstrap publishes when telemetry is
// disabled (one present global). The second is what a Gym server with telemetry off runs.
const OFF_STATES = {
  'disabled / bare': undefined,
  'off state / bare': { metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator: false },
};
for (const [test, state] of Object.entries(OFF_STATES)) {
  setTelemetryState(state);
  if (isMetricsExporting()) throw new Error('benchmark must run with metrics off');
  for (const [shapeName, shape] of Object.entries(SHAPES)) {
    for (const [kind, { make, inside }] of Object.entries(LIMITS)) {
      if (!`${test} ${kind} ${shapeName}`.includes(ONLY)) continue;
      const r = await compare(
        () => {
          const limit = make(shape.limit);
          return () => inside(limit, body);
        },
        () => throughOperation(make(shape.limit)),
        shape.inFlight,
      );
      rows.push({ test, kind, shape: shapeName, target: 1.05, ...r });
    }
  }
}
setTelemetryState(undefined);

for (const [shapeName, shape] of Object.entries(SHAPES)) {
  for (const [kind, { make, capacity }] of Object.entries(LIMITS)) {
    if (!`metered ${kind} ${shapeName}`.includes(ONLY)) continue;
    const r = await compare(
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
    rows.push({ test: 'metered / plain', kind, shape: shapeName, target: 1.05, ...r });
  }
}

const reader = new PullReader();
const provider = new MeterProvider({ readers: [reader] });
metrics.setGlobalMeterProvider(provider);
if (!isMetricsExporting()) throw new Error('benchmark could not turn metrics on');
const floorMeter = provider.getMeter('bench-floor');
const advice = { explicitBucketBoundaries: [...OPERATION_BOUNDARIES_MS] };
const histograms = {
  queue: floorMeter.createHistogram(`${METRIC_OPERATION_QUEUE_DURATION}.floor`, { unit: 'ms', advice }),
  run: floorMeter.createHistogram(`${METRIC_OPERATION_DURATION}.floor`, { unit: 'ms', advice }),
};
for (const [shapeName, shape] of Object.entries(SHAPES)) {
  for (const [kind, { make }] of Object.entries(LIMITS)) {
    if (!`enabled ${kind} ${shapeName}`.includes(ONLY)) continue;
    const r = await compare(
      () => floorOf(kind, make(shape.limit), histograms),
      () => throughOperation(make(shape.limit)),
      shape.inFlight,
    );
    rows.push({ test: 'enabled / floor', kind, shape: shapeName, target: 1.1, ...r });
  }
}
await reader.collect(); // the SDK really aggregated what was recorded
metrics.disable();

console.log(
  `\n@gym/operations benchmark — node ${process.version}, ${OPS_PER_ROUND} ops/round, ${WARMUP_ROUNDS} warm-up + ` +
    `${ROUNDS} paired rounds per row; ratio = median of per-round ratios; empty async bodies\n`,
);
console.log(
  `${'comparison'.padEnd(17)}${'limit'.padEnd(23)}${'workload'.padEnd(10)}` +
    `${'base ns/op'.padStart(11)}${'ours ns/op'.padStart(11)}${'ratio'.padStart(8)}` +
    `${'p25–p75'.padStart(13)}${'min–max'.padStart(13)}  target`,
);
for (const r of rows) {
  const verdict = r.ratio <= r.target ? 'ok' : 'MISSED';
  console.log(
    `${r.test.padEnd(17)}${r.kind.padEnd(23)}${r.shape.padEnd(10)}` +
      `${fmt(r.base).padStart(11)}${fmt(r.subject).padStart(11)}${r.ratio.toFixed(3).padStart(8)}` +
      `${`${r.ratioP25.toFixed(2)}–${r.ratioP75.toFixed(2)}`.padStart(13)}` +
      `${`${r.ratioMin.toFixed(2)}–${r.ratioMax.toFixed(2)}`.padStart(13)}  ≤${r.target.toFixed(2)} ${verdict}`,
  );
}
