// "Off is free", measured: with nothing exporting, a sandbox recorder is the gate
// (`isTracesExporting()` from @gym/core for the records, `isMetricsExporting()` for the
// lifecycle metrics) and a return, before any input is read or any attribute object is built. Reported as ratios against primitives measured in the same
// process (never absolute nanoseconds): the gate itself, one clock read, a bare call. An
// on-path figure (a real SDK with a no-op processor) is printed for scale, not asserted.
// Runs on the build output: `npm run bench` (root) builds first.
import { isMetricsExporting, isTracesExporting } from '@gym/core';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { checkOffPath } from '../../../scripts/bench/measure.mjs';
import { ResourceSampler, recordRequest, SandboxLifecycle, samplingInterval } from '../dist/index.js';

if (isTracesExporting() || isMetricsExporting()) {
  console.error('telemetry is exporting in the bench process; the off path cannot be measured');
  process.exit(1);
}

const spec = { resources: { cpu: 2, memoryMib: 4096 } };
const extra = { 'nemo.gym.sandbox.provider': 'docker' };
const handle = { id: 'sbx-1', owned: true };
const provider = { resourceSample: () => ({}) };

const { ok, gateNs, measure } = checkOffPath({
  gateName: 'isTracesExporting()',
  gate: isTracesExporting,
  state: 'traces off',
  cases: {
    recordRequest: () => recordRequest(spec, extra),
    samplingInterval: () => samplingInterval(),
  },
  calls: 200_000,
  rounds: 15,
  // Off, a recorder may cost at most this many gates, and less than one clock read.
  maxGates: 3,
  maxClocks: 1,
});

const docker = { provider: 'docker' };
const lifecycle = new SandboxLifecycle(docker);
const work = () => 1;
const metricsOff = checkOffPath({
  gateName: 'isMetricsExporting()',
  gate: isMetricsExporting,
  state: 'metrics off',
  cases: {
    'SandboxLifecycle.exec (around a bare call)': () => lifecycle.exec(work),
    'SandboxLifecycle.transfer (around a bare call)': () => lifecycle.transfer(work),
    'SandboxLifecycle.retried': () => lifecycle.retried(),
  },
  calls: 200_000,
  rounds: 15,
  maxGates: 3,
  maxClocks: 1,
});

// Not a hot path (once per sandbox), shown for scale: construct + start + stop of a sampler that has nothing to do.
const samplerNs = measure(() => {
  const sampler = new ResourceSampler(provider, handle, extra, 5);
  sampler.start();
  void sampler.stop();
}, 20_000);
console.log(`ResourceSampler construct+start+stop, traces off: ${(samplerNs / gateNs).toFixed(1)}x the gate`);

const tracer = new TracerProvider().getTracer('bench');
const tracerProvider = { getTracer: () => tracer };
const onNs = measure(() => recordRequest(spec, extra, { tracerProvider }), 20_000);
console.log(
  `recordRequest, traces on (real SDK, no processor): ${(onNs / 1000).toFixed(2)} µs per call, ${(onNs / gateNs).toFixed(0)}x the gate`,
);

const lifecycleNs = measure(() => {
  const sandbox = new SandboxLifecycle(docker);
  sandbox.create(work);
  sandbox.release();
}, 20_000);
console.log(`SandboxLifecycle construct+create+release, metrics off: ${(lifecycleNs / gateNs).toFixed(1)}x the gate`);

if (!ok || !metricsOff.ok) process.exit(1);
