// Child process for the quiet-loop test: an idle Node process with the observer on. It runs
// an independent control timer alongside (the same measurement, written here by hand) so the
// parent can tell a busy machine from an observer that invents lag. Prints one JSON line.
// It never calls stop() and sets no ref'd timer after the measurement: the process must exit
// on its own, which proves the observer's timer is unref'd.

import { AggregationType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { startObserver } from '../../dist/index.js';

const durationMs = Number(process.argv[2] ?? 3000);
const intervalMs = Number(process.argv[3] ?? 20);

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

setTimeout(async () => {
  clearTimeout(controlTimer);
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((s) => s.metrics)
    .find((m) => m.descriptor.name === 'gym.event_loop.lag_ms');
  const value = metric?.dataPoints[0]?.value;
  process.stdout.write(`${JSON.stringify({ histogram: value ?? null, control })}\n`);
}, durationMs);
