// One arm of the idle-cost benchmark: an idle Node process with a real SDK (a periodic reader
// exporting to memory every second, which is more often than any real scrape), with the
// observer on or off. Prints the CPU it used per second of wall time while idle, as JSON.

import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { startObserver } from '../dist/index.js';

const [mode = 'off', seconds = '10', warmup = '1'] = process.argv.slice(2);
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 1000 });
const meterProvider = new MeterProvider({ readers: [reader] });
// Something to export in both arms, so the difference is the observer alone.
meterProvider
  .getMeter('bench')
  .createObservableGauge('bench.idle')
  .addCallback((r) => r.observe(1));
const observer = mode === 'on' ? startObserver({ meterProvider, serverName: 'bench' }) : undefined;

setTimeout(() => {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  setTimeout(async () => {
    const cpu = process.cpuUsage(cpu0);
    const wallMs = performance.now() - t0;
    observer?.stop();
    await meterProvider.shutdown();
    const exported = exporter
      .getMetrics()
      .flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics.map((m) => m.descriptor.name)));
    process.stdout.write(
      `${JSON.stringify({ mode, cpuMicros: cpu.user + cpu.system, wallMs, names: [...new Set(exported)].sort() })}\n`,
    );
  }, Number(seconds) * 1000);
}, Number(warmup) * 1000);
