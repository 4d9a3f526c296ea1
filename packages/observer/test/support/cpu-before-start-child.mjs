// Child process for the CPU-time test: it burns CPU before anything of the observer exists,
// then starts the observer on a real SDK reader, collects once and prints one JSON line: the
// user and system seconds exported, and `process.cpuUsage()` read just before and just after
// the collection.

import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';

const burnMicros = Number(process.argv[2] ?? 300_000);
// Burns until the process has used that much more user CPU: a wall-clock loop on a loaded
// machine may be scheduled out for all of its time and use none.
const until = process.cpuUsage().user + burnMicros;
while (process.cpuUsage().user < until) {}

const { startObserver } = await import('../../dist/index.js');
class Reader extends MetricReader {
  async onShutdown() {}
  async onForceFlush() {}
}
const reader = new Reader();
const observer = startObserver({ meterProvider: new MeterProvider({ readers: [reader] }) });
const before = process.cpuUsage();
const { resourceMetrics } = await reader.collect();
const after = process.cpuUsage();
observer.stop();
const points = resourceMetrics.scopeMetrics
  .flatMap((s) => s.metrics)
  .find((m) => m.descriptor.name === 'process.cpu.time')
  .dataPoints.map((p) => [p.attributes['cpu.mode'], p.value]);
process.stdout.write(`${JSON.stringify({ exported: Object.fromEntries(points), before, after })}\n`);
