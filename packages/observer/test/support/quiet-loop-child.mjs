// Child process for the quiet-loop test: an idle Node process with the observer on. It runs
// an independent control timer alongside (the same measurement, written here by hand) so the
// parent can tell a busy machine from an observer that invents lag. It waits for the samples it
// needs (polling its own reader), never for a fixed time, and prints one JSON line: the lag
// histogram, the control's samples and the time the whole measurement took.
// It never calls stop() and sets no ref'd timer after the measurement: the process must exit
// on its own, which proves the observer's timer is unref'd.

import { AggregationType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { startObserver } from '../../dist/index.js';

const minSamples = Number(process.argv[2] ?? 100);
const intervalMs = Number(process.argv[3] ?? 20);
/** A failure guard only: a machine this slow prints what it has, and the parent's checks fail. */
const guardMs = Number(process.argv[4] ?? 45_000);

class Reader extends MetricReader {
  async onShutdown() {}
  async onForceFlush() {}
}
const reader = new Reader();
const boundaries = Array.from({ length: 100 }, (_, i) => i + 1);
const meterProvider = new MeterProvider({
  readers: [reader],
  views: [
    {
      instrumentName: 'gym.event_loop.lag_ms',
      aggregation: { type: AggregationType.EXPLICIT_BUCKET_HISTOGRAM, options: { boundaries } },
    },
  ],
});

const started = performance.now();
startObserver({ meterProvider, lagIntervalMs: intervalMs });

const control = [];
let intended = performance.now() + intervalMs;
const controlTick = () => {
  const now = performance.now();
  control.push(Math.max(0, now - intended));
  intended = now + intervalMs;
  controlTimer = setTimeout(controlTick, intervalMs);
};
let controlTimer = setTimeout(controlTick, intervalMs);

async function lag() {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((s) => s.metrics)
    .find((m) => m.descriptor.name === 'gym.event_loop.lag_ms');
  return metric?.dataPoints[0]?.value;
}

async function poll() {
  const histogram = await lag();
  // Every sample in `histogram` was taken before this read.
  const elapsedMs = performance.now() - started;
  if ((histogram?.count ?? 0) < minSamples && elapsedMs < guardMs) {
    setTimeout(poll, intervalMs * 5);
    return;
  }
  clearTimeout(controlTimer);
  process.stdout.write(`${JSON.stringify({ histogram: histogram ?? null, control, elapsedMs })}\n`);
}
setTimeout(poll, intervalMs * 5);
