// What telemetry costs a process, as ratios measured on this machine in one run (never
// absolute thresholds): the start-up of a server with telemetry off against a bare `node`,
// and with telemetry on (Prometheus, ephemeral port) for contrast; then the span-group
// gate against a bare function call. Run with `npm run bench` (after a build).
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';

const entry = new URL('../dist/index.js', import.meta.url).href;
const RUNS = 15;

function cleanEnv(extra) {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(NEMO_GYM_OTEL_|NEMO_LENS_|OTEL_)/.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function timeNode(args, env) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    execFileSync(process.execPath, args, { env, stdio: 'ignore' });
    times.push(performance.now() - start);
  }
  return median(times);
}

const init = `const { initTelemetry, shutdownTelemetry } = await import(${JSON.stringify(entry)});
await initTelemetry({ serverName: 'bench', serverType: 'resources_servers' });
await shutdownTelemetry();`;

const bare = timeNode(['--input-type=module', '-e', ''], cleanEnv({}));
// What an instrumented server loads anyway: the OpenTelemetry API.
const api = timeNode(['--input-type=module', '-e', "await import('@opentelemetry/api');"], cleanEnv({}));
const off = timeNode(['--input-type=module', '-e', init], cleanEnv({}));
const on = timeNode(
  ['--input-type=module', '-e', init],
  cleanEnv({ NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: '0' }),
);

const { isSpanGroupEnabled } = await import(entry);
const { setTelemetryState } = await import('@gym/core');
setTelemetryState({ metricsExporting: false, tracesExporting: false, spanGroups: [], orchestrator: false });
function bareCall(_group) {
  return false;
}
function loop(fn) {
  let best = Number.POSITIVE_INFINITY;
  let sink = 0;
  for (let round = 0; round < 5; round++) {
    const start = performance.now();
    for (let i = 0; i < 50_000; i++) if (fn('sandbox')) sink++;
    best = Math.min(best, performance.now() - start);
  }
  if (sink !== 0) throw new Error('gate open');
  return best;
}
const gate = loop(isSpanGroupEnabled);
const call = loop(bareCall);

console.log(
  `process start, median of ${RUNS} (ms): bare node ${bare.toFixed(1)}, node + @opentelemetry/api ${api.toFixed(1)}, ` +
    `telemetry off ${off.toFixed(1)}, telemetry on (prometheus) ${on.toFixed(1)}`,
);
console.log(
  `  off / bare = ${(off / bare).toFixed(2)}x   off / api-only = ${(off / api).toFixed(2)}x   on / bare = ${(on / bare).toFixed(2)}x`,
);
console.log(`isSpanGroupEnabled('sandbox') while off, best of 5 x 50 000: ${(gate / call).toFixed(2)}x a bare call`);
