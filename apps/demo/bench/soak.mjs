// Soak: the demo's servers under the load generator's mixed load for minutes, with a flood of
// hanging verifies and a burst of clients that leave mid-request every FLOOD_EVERY_SECONDS.
// The servers are started here rather than by the orchestrator, so they can be asked for
// their memory after a full GC (`--expose-gc`, over IPC). What it shows: resident memory after GC stays flat once warm (no leak per
// request, refusal, cancellation or flood), and once the load stops every limit drains to 0
// calls holding a slot and 0 waiting (the gates' own counts and the Prometheus gauges agree).
// Run (after `npm run build`): `npm run soak --workspace=@gym/demo`, or `node bench/soak.mjs`
// here. SOAK_SECONDS (default 180) sets the length; never part of the tests.

import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { DEFAULT_WORKERS, runLoad } from '../dist/load-generator.js';
import { parsePrometheusText } from '../dist/prometheus-text.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 180);
const SERVERS = 2;
/** Memory is read after GC this often; the first reading after WARM_UP_SECONDS is the baseline. */
const SAMPLE_EVERY_SECONDS = 15;
const WARM_UP_SECONDS = 30;
const FLOOD_EVERY_SECONDS = 20;
const FLOOD_CONNECTIONS = 500;
const LEAVERS = 50;
/** "Flat": the last reading within this factor of the baseline. */
const FLAT_FACTOR = 1.15;
const SERVER = fileURLToPath(new URL('../dist/server.js', import.meta.url));

async function startServer(name) {
  const child = spawn(process.execPath, ['--expose-gc', SERVER, '--name', name], {
    env: {
      ...process.env,
      NEMO_GYM_OTEL_ENABLED: '1',
      NEMO_GYM_OTEL_EXPORTER: 'prometheus',
      OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
      OTEL_EXPORTER_PROMETHEUS_PORT: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ready = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), 15_000);
    const onMessage = (message) => {
      if (message?.type !== 'ready') return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  return { name, child, url: ready.url, metrics: ready.metrics };
}

/** A full GC in the server, then its memory. */
function memoryAfterGc(server) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${server.name} did not report its memory`)), 10_000);
    const onMessage = (message) => {
      if (message?.type !== 'memory') return;
      clearTimeout(timer);
      server.child.off('message', onMessage);
      resolve(message);
    };
    server.child.on('message', onMessage);
    server.child.send({ type: 'gc' });
  });
}

/** FLOOD_CONNECTIONS hanging verifies at once, plus LEAVERS verifies whose clients leave after 50 ms. */
async function flood(server) {
  const { port } = new URL(server.url);
  const body = JSON.stringify({ answer: 'a', expected: 'a', mode: 'hang' });
  const request = `POST /verify HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
  const sockets = [];
  const statuses = new Map();
  const one = (leave) =>
    new Promise((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
      sockets.push(socket);
      socket.setEncoding('utf8');
      socket.once('data', (chunk) => {
        const status = chunk.slice(9, 12);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        socket.destroy();
        resolve();
      });
      socket.on('error', () => resolve());
      socket.on('close', () => resolve());
      if (leave) setTimeout(() => socket.destroy(), 50);
    });
  const all = [];
  for (let i = 0; i < FLOOD_CONNECTIONS; i += 100) {
    all.push(...Array.from({ length: 100 }, () => one(false)));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  all.push(...Array.from({ length: LEAVERS }, () => one(true)));
  await Promise.race([Promise.all(all), new Promise((resolve) => setTimeout(resolve, 15_000))]);
  for (const socket of sockets) socket.destroy();
  return Object.fromEntries(statuses);
}

const mib = (bytes) => (bytes / 1024 / 1024).toFixed(1);

const servers = await Promise.all(Array.from({ length: SERVERS }, (_, i) => startServer(`soak-${i + 1}`)));
console.log(
  `soak: ${SECONDS} s, ${SERVERS} servers (${servers.map((s) => `pid ${s.child.pid}`).join(', ')}), default limits and queue bounds`,
);
console.log(
  `      load generator workers per server ${JSON.stringify(DEFAULT_WORKERS)}; every ${FLOOD_EVERY_SECONDS} s a flood of ${FLOOD_CONNECTIONS} hanging verifies and ${LEAVERS} clients that leave`,
);

const stop = new AbortController();
const started = performance.now();
const readings = [];
const floods = [];
const sampler = (async () => {
  for (let next = SAMPLE_EVERY_SECONDS; ; next += SAMPLE_EVERY_SECONDS) {
    const wait = started + next * 1000 - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (stop.signal.aborted) return;
    const memory = await Promise.all(servers.map(memoryAfterGc));
    const reading = { second: next, rss: memory.map((m) => m.rss), heap: memory.map((m) => m.heapUsed) };
    readings.push(reading);
    console.log(
      `  ${String(next).padStart(4)} s  rss after GC ${reading.rss.map(mib).join(' / ')} MiB  heap ${reading.heap.map(mib).join(' / ')} MiB`,
    );
  }
})();
const flooder = (async () => {
  for (let next = FLOOD_EVERY_SECONDS; next < SECONDS - 5; next += FLOOD_EVERY_SECONDS) {
    const wait = started + next * 1000 - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (stop.signal.aborted) return;
    floods.push(await Promise.all(servers.map(flood)));
  }
})();

const load = await runLoad({
  targets: servers.map((server) => ({ name: server.name, url: () => server.url })),
  durationMs: SECONDS * 1000,
  maxRequests: undefined,
  workers: DEFAULT_WORKERS,
  signal: stop.signal,
});
stop.abort();
await flooder;
await sampler.catch(() => {});

// Drained: every gate's own counts and the Prometheus gauges, once the last calls ended
// (a call holding a slot when the load stopped finishes or is cancelled within seconds).
const DRAIN_WAIT_MS = 10_000;
const drainStarted = performance.now();
for (;;) {
  const states = await Promise.all(servers.map(async (server) => (await fetch(`${server.url}/limits`)).json()));
  const busy = states.flatMap((limits, i) =>
    ['verify', 'tool', 'judge']
      .filter((route) => limits[route].active + limits[route].queued > 0)
      .map((route) => `${servers[i].name} ${route}: active ${limits[route].active}, queued ${limits[route].queued}`),
  );
  if (busy.length === 0 || performance.now() - drainStarted > DRAIN_WAIT_MS) {
    console.log(
      `drain: ${busy.length === 0 ? 'every limit empty' : `still busy: ${busy.join('; ')}`} ${((performance.now() - drainStarted) / 1000).toFixed(1)} s after the load ended`,
    );
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 250));
}
const final = await Promise.all(servers.map(memoryAfterGc));
let drained = true;
const ends = [];
for (const server of servers) {
  const limits = await (await fetch(`${server.url}/limits`)).json();
  const samples = parsePrometheusText(await (await fetch(server.metrics)).text());
  const gauge = (name) =>
    samples.filter((sample) => sample.name === name).reduce((sum, sample) => sum + sample.value, 0);
  const gates = ['verify', 'tool', 'judge'].map((route) => limits[route]);
  const end = {
    name: server.name,
    active: gates.reduce((sum, gate) => sum + gate.active, 0),
    queued: gates.reduce((sum, gate) => sum + gate.queued, 0),
    promActive: gauge('gym_resources_operation_active') + gauge('gym_concurrency_active'),
    promQueued: gauge('gym_resources_operation_queued') + gauge('gym_concurrency_queue_depth'),
    refused: gates.reduce((sum, gate) => sum + gate.rejected + gate.timedOut, 0),
    left: gates.reduce((sum, gate) => sum + gate.cancelled, 0),
    sandboxes: limits.sandboxes.live,
  };
  ends.push(end);
  if (end.active + end.queued + end.promActive + end.promQueued !== 0) drained = false;
}
for (const server of servers) server.child.kill('SIGTERM');

const baseline = readings.find((reading) => reading.second >= WARM_UP_SECONDS) ?? readings[0];
const last = { rss: final.map((m) => m.rss), heap: final.map((m) => m.heapUsed) };
const ratios = last.rss.map((rss, i) => rss / baseline.rss[i]);
const heapRatios = last.heap.map((heap, i) => heap / baseline.heap[i]);
const flat = ratios.every((ratio) => ratio <= FLAT_FACTOR);
console.log('');
console.log(
  `load: ${(load.elapsedMs / 1000).toFixed(0)} s, ${load.sent} requests sent by the load generator (no answer ${load.noAnswer}), ${floods.length} floods (${floods
    .flat()
    .reduce((sum, statuses) => sum + Object.values(statuses).reduce((a, b) => a + b, 0), 0)} answered flood requests)`,
);
console.log(
  `rss after GC, baseline at ${baseline.second} s → end: ${baseline.rss.map(mib).join(' / ')} → ${last.rss.map(mib).join(' / ')} MiB (ratio ${ratios.map((r) => r.toFixed(3)).join(' / ')}; flat means ≤ ${FLAT_FACTOR})`,
);
console.log(
  `heap used after GC, baseline → end: ${baseline.heap.map(mib).join(' / ')} → ${last.heap.map(mib).join(' / ')} MiB (ratio ${heapRatios.map((r) => r.toFixed(3)).join(' / ')})`,
);
for (const end of ends) {
  console.log(
    `${end.name} at the end: active ${end.active}, queued ${end.queued} (Prometheus gym_resources_operation_* + gym_concurrency_*: active ${end.promActive}, queued ${end.promQueued}); refused ${end.refused}, clients left while queued ${end.left}; live sandboxes ${end.sandboxes}`,
  );
}
console.log(`verdict: RSS ${flat ? 'flat' : 'GREW'}; limits ${drained ? 'drained to 0' : 'NOT drained'}`);
process.exitCode = flat && drained ? 0 : 1;
