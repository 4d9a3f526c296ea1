// What the observer costs an idle server: CPU per second of an idle process with the observer
// on against the same process with it off (same SDK, same export every second), measured with
// process.cpuUsage() in child processes, arms alternated so a busy neighbour hits both alike.
// The figure is the difference, as a percentage of one core. Fails (exit 1) at 1 % or more.
//
//   npm run bench -w @gym/observer          (after npm run build)
//   node bench/idle-cost.mjs [seconds per arm] [rounds]

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./idle-child.mjs', import.meta.url));
const seconds = Number(process.argv[2] ?? 10);
const rounds = Number(process.argv[3] ?? 2);
const LIMIT_PERCENT = 1;

function arm(mode) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, mode, String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`${mode} arm exited ${code} without a result`));
      }
    });
  });
}

const perSecond = { off: [], on: [] };
let names = [];
for (let round = 0; round < rounds; round += 1) {
  for (const mode of round % 2 === 0 ? ['off', 'on'] : ['on', 'off']) {
    const result = await arm(mode);
    const msPerSecond = result.cpuMicros / 1000 / (result.wallMs / 1000);
    perSecond[mode].push(msPerSecond);
    if (mode === 'on') names = result.names;
    console.log(`round ${round + 1} ${mode.padEnd(3)}: ${msPerSecond.toFixed(3)} ms CPU per s`);
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
// The lower of the two: the least-disturbed run of each arm is closest to its own cost.
const best = (values) => Math.min(...values);
const off = best(perSecond.off);
const on = best(perSecond.on);
const percent = ((on - off) / 1000) * 100;
console.log(`exported with the observer on: ${names.join(', ')}`);
console.log(`idle CPU, observer off: ${off.toFixed(3)} ms/s (median ${median(perSecond.off).toFixed(3)})`);
console.log(`idle CPU, observer on:  ${on.toFixed(3)} ms/s (median ${median(perSecond.on).toFixed(3)})`);
console.log(
  `observer cost: ${(on - off).toFixed(3)} ms CPU per s = ${percent.toFixed(3)} % of one core (limit ${LIMIT_PERCENT} %)`,
);
if (!names.includes('gym.event_loop.lag_ms')) {
  console.log('FAIL: the "on" arm exported no gym.event_loop.lag_ms; the benchmark measured nothing');
  process.exitCode = 1;
} else if (percent >= LIMIT_PERCENT) {
  console.log('FAIL: the observer costs 1 % of a core or more');
  process.exitCode = 1;
}
