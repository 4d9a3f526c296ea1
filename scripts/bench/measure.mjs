// The timing loop of the micro-benchmarks: best (lowest) nanoseconds per call over a
// number of rounds, i.e. the least disturbed run. Benchmarks report ratios of two such
// figures taken in the same process, never absolute nanoseconds.

/**
 * @param {(i: number) => unknown} fn the call to time; gets the iteration index.
 * @param {{ calls: number, rounds: number }} size calls per round and rounds.
 * @returns {number} the best round's nanoseconds per call.
 */
export function bestNsPerCall(fn, { calls, rounds }) {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i += 1) fn(i);
    const ns = Number(process.hrtime.bigint() - start) / calls;
    if (ns < best) best = ns;
  }
  return best;
}

let sink = 0;

/**
 * "Off is free", checked: times each case against the off-path gate, one clock read and a
 * bare call, all in this process, prints one line per case and returns false when a case
 * costs more than `maxGates` gates or at least `maxClocks` clock reads.
 *
 * @param {{ gateName: string, gate: () => boolean, state: string, cases: Record<string, (i: number) => unknown>,
 *   calls: number, rounds: number, maxGates: number, maxClocks: number }} spec
 * @returns {{ ok: boolean, gateNs: number, measure: (fn: (i: number) => unknown, calls?: number) => number }}
 */
export function checkOffPath({ gateName, gate, state, cases, calls, rounds, maxGates, maxClocks }) {
  const measure = (fn, n = calls) => bestNsPerCall(fn, { calls: n, rounds });
  const bareNs = measure((i) => {
    sink += i > 0 ? 1 : 0;
  });
  const gateNs = measure(() => {
    if (gate()) sink += 1;
  });
  const clockNs = measure(() => {
    sink += performance.now();
  });
  console.log(
    `bare call ${bareNs.toFixed(2)} ns, ${gateName} ${gateNs.toFixed(2)} ns, performance.now() ${clockNs.toFixed(2)} ns`,
  );
  let ok = true;
  for (const [name, fn] of Object.entries(cases)) {
    const ns = measure(fn);
    const gates = ns / gateNs;
    const clocks = ns / clockNs;
    if (gates > maxGates || clocks >= maxClocks) ok = false;
    console.log(
      `${name}, ${state}: ${gates.toFixed(2)}x the gate, ${clocks.toFixed(2)}x a clock read, ${(ns / bareNs).toFixed(1)}x a bare call`,
    );
  }
  if (sink < 0) console.log(sink);
  if (!ok) console.error(`an off-path recorder costs more than ${maxGates} gates or a clock read`);
  return { ok, gateNs, measure };
}

/**
 * The async counterpart of {@link bestNsPerCall}, for cases that must await (an HTTP request):
 * runs `rounds` pairs of rounds of `run` and `baseline`, interleaved ABBA so that drift on a
 * shared machine lands on both sides, and returns the median of the per-pair ratios. CPU time
 * of this process (`process.cpuUsage`) is the verdict: it counts only the work done, where wall
 * time also holds every moment the scheduler gave the CPU to another process. Wall time is
 * reported beside it.
 *
 * @param {{ run: () => Promise<void>, baseline: () => Promise<void>, ops: number, rounds: number,
 *   setUp?: () => void, tearDown?: () => void }} spec each of `run` and `baseline` performs `ops`
 *   operations; `setUp` and `tearDown`, untimed, run just before and after each `run` round.
 * @returns {Promise<{ cpuRatio: number, cpuQuartiles: [number, number], wallRatio: number, baselineCpuNs: number }>}
 *   `cpuQuartiles`: the first and third quartiles of the per-pair CPU ratios, their spread.
 */
export async function medianAsyncRatio({ run, baseline, ops, rounds, setUp = () => {}, tearDown = () => {} }) {
  const time = async (fn) => {
    if (fn === run) setUp();
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    await fn();
    const wall = Number(process.hrtime.bigint() - start) / ops;
    const cpu = process.cpuUsage(cpu0);
    if (fn === run) tearDown();
    return { wall, cpu: ((cpu.user + cpu.system) * 1000) / ops };
  };
  const cpuRatios = [];
  const wallRatios = [];
  const baselineCpu = [];
  for (let round = 0; round < rounds; round += 1) {
    const baselineFirst = round % 2 === 0;
    const a = await time(baselineFirst ? baseline : run);
    const b = await time(baselineFirst ? run : baseline);
    const [base, measured] = baselineFirst ? [a, b] : [b, a];
    cpuRatios.push(measured.cpu / base.cpu);
    wallRatios.push(measured.wall / base.wall);
    baselineCpu.push(base.cpu);
  }
  const quantile = (xs, q) => xs.sort((x, y) => x - y)[Math.floor((xs.length - 1) * q)];
  const median = (xs) => quantile(xs, 0.5);
  return {
    cpuRatio: median(cpuRatios),
    cpuQuartiles: [quantile(cpuRatios, 0.25), quantile(cpuRatios, 0.75)],
    wallRatio: median(wallRatios),
    baselineCpuNs: median(baselineCpu),
  };
}
