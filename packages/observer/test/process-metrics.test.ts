// process.* under OpenTelemetry's names, units and attributes, read at collection time, checked
// against independent reads of the same numbers.

import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ATTR_CPU_MODE, INSTRUMENTS } from '@gym/constants';
import { startObserver } from '@gym/observer';
import { captureDiag, counterValue, createMetricHarness, findMetric, type MetricHarness } from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DataPointType } from '@opentelemetry/sdk-metrics';
import { type ProcSource, startProcessMetrics, threadsOf } from '../src/process-metrics.js';

const linux = process.platform === 'linux';

let harness: MetricHarness;
beforeEach(() => {
  harness = createMetricHarness();
});
afterEach(async () => {
  await harness.shutdown();
});

describe('through startObserver', () => {
  it('process.cpu.time: a counter in s by cpu.mode user and system, the process’s total CPU at each collection', async () => {
    const observer = startObserver({ meterProvider: harness.meterProvider });
    try {
      for (let round = 0; round < 2; round++) {
        if (round === 1) {
          // 20 ms more user CPU between the two collections.
          const until = process.cpuUsage().user + 20_000;
          while (process.cpuUsage().user < until) {}
        }
        const before = process.cpuUsage();
        const collected = await harness.collect();
        const after = process.cpuUsage();
        const metric = findMetric(collected, INSTRUMENTS.processCpuTime.name);
        expect(metric.descriptor.unit).toBe('s');
        expect(metric.dataPointType).toBe(DataPointType.SUM);
        expect((metric as { isMonotonic?: boolean }).isMonotonic).toBe(true);
        expect(
          metric.dataPoints
            .map((p) => p.attributes)
            .sort((a, b) => String(a[ATTR_CPU_MODE]).localeCompare(String(b[ATTR_CPU_MODE]))),
        ).toEqual([{ [ATTR_CPU_MODE]: 'system' }, { [ATTR_CPU_MODE]: 'user' }]);
        // Read within the collection: between independent reads just before and just after it.
        for (const mode of ['user', 'system'] as const) {
          const value = counterValue(collected, INSTRUMENTS.processCpuTime.name, { [ATTR_CPU_MODE]: mode })!;
          expect(value).toBeGreaterThanOrEqual(before[mode] / 1e6);
          expect(value).toBeLessThanOrEqual(after[mode] / 1e6);
        }
      }
    } finally {
      observer.stop();
    }
  });

  it('process.cpu.time includes the CPU a process used before the observer started (a child that burned 300 ms first)', () => {
    interface ChildReport {
      exported: { user: number; system: number };
      before: NodeJS.CpuUsage;
      after: NodeJS.CpuUsage;
    }
    const CHILD = fileURLToPath(new URL('./support/cpu-before-start-child.mjs', import.meta.url));
    // The timeout is a failure guard for a child that hangs; a loaded machine starts one slowly.
    const child = spawnSync(process.execPath, [CHILD, '300000'], { encoding: 'utf8', timeout: 60_000 });
    expect(child.stderr).toBe('');
    const { exported, before, after } = JSON.parse(child.stdout) as ChildReport;
    expect(exported.user).toBeGreaterThanOrEqual(0.3); // the burn alone
    for (const mode of ['user', 'system'] as const) {
      expect(exported[mode]).toBeGreaterThanOrEqual(before[mode] / 1e6);
      expect(exported[mode]).toBeLessThanOrEqual(after[mode] / 1e6);
    }
  });

  it('process.memory.usage: resident bytes (By), no attributes, near an independent read', async () => {
    const observer = startObserver({ meterProvider: harness.meterProvider });
    try {
      const collected = await harness.collect();
      const rss = process.memoryUsage.rss();
      const metric = findMetric(collected, INSTRUMENTS.processMemoryUsage.name);
      expect(metric.descriptor.unit).toBe('By');
      expect(metric.dataPointType).toBe(DataPointType.SUM);
      expect((metric as { isMonotonic?: boolean }).isMonotonic).toBe(false);
      const value = counterValue(collected, INSTRUMENTS.processMemoryUsage.name, {})!;
      expect(Number.isInteger(value)).toBe(true);
      expect(value).toBeGreaterThan(rss / 2);
      expect(value).toBeLessThan(rss * 2);
    } finally {
      observer.stop();
    }
  });

  (linux ? it : it.skip)('process.thread.count ({thread}) matches /proc/self/task', async () => {
    const observer = startObserver({ meterProvider: harness.meterProvider });
    try {
      const collected = await harness.collect();
      const tasks = readdirSync('/proc/self/task').length;
      const metric = findMetric(collected, INSTRUMENTS.processThreadCount.name);
      expect(metric.descriptor.unit).toBe('{thread}');
      const value = counterValue(collected, INSTRUMENTS.processThreadCount.name, {})!;
      expect(value).toBeGreaterThanOrEqual(2);
      expect(Math.abs(value - tasks)).toBeLessThanOrEqual(2);
    } finally {
      observer.stop();
    }
  });

  (linux ? it : it.skip)(
    'process.open_file_descriptor.count ({file_descriptor}) rises by exactly the descriptors opened',
    async () => {
      const observer = startObserver({ meterProvider: harness.meterProvider });
      const opened: number[] = [];
      try {
        const metric = findMetric(await harness.collect(), INSTRUMENTS.processOpenFds.name);
        expect(metric.descriptor.unit).toBe(INSTRUMENTS.processOpenFds.unit);
        const before = counterValue(await harness.collect(), INSTRUMENTS.processOpenFds.name, {})!;
        for (let i = 0; i < 5; i += 1) opened.push(openSync('/proc/self/status', 'r'));
        const after = counterValue(await harness.collect(), INSTRUMENTS.processOpenFds.name, {})!;
        expect(after - before).toBe(5);
        // Not counting the directory listing's own descriptor: equal to a listing minus one.
        expect(after).toBe(readdirSync('/proc/self/fd').length - 1);
      } finally {
        for (const fd of opened) closeSync(fd);
        observer.stop();
      }
    },
  );
});

(linux ? describe : describe.skip)(
  'counting descriptors never blocks the event loop in proportion to their number',
  () => {
    interface ChildReport {
      sync: string[];
      asyncRequests: number;
      exported: number;
      unit: string;
      listed: number;
      statSize: number;
    }
    const CHILD = fileURLToPath(new URL('./support/fd-count-child.mjs', import.meta.url));
    const run = (extra: number): ChildReport => {
      // The timeout is a failure guard for a child that hangs; a loaded machine starts one slowly.
      const child = spawnSync(process.execPath, [CHILD, String(extra)], { encoding: 'utf8', timeout: 60_000 });
      expect(child.stderr).toBe('');
      return JSON.parse(child.stdout) as ChildReport;
    };

    it('no synchronous fs call touches /proc/self/fd, and the asynchronous work does not grow with 5,000 more descriptors', () => {
      const few = run(0);
      const many = run(5000);
      for (const report of [few, many]) {
        expect(report.sync.filter((call) => call.includes('/proc/self/fd'))).toEqual([]);
        // Only the fixed-size status file is read synchronously (threads), once per collection.
        expect(report.sync.filter((call) => call.includes('(/proc/') && !call.endsWith('(/proc/self/status)'))).toEqual(
          [],
        );
        expect(report.exported).toBe(report.listed);
        expect(report.unit).toBe(INSTRUMENTS.processOpenFds.unit);
      }
      expect(many.exported - few.exported).toBe(5000);
      if (many.statSize > 0) {
        // Linux 6.2+: one stat per collection, whatever the count.
        expect(many.asyncRequests).toBe(few.asyncRequests);
        expect(many.asyncRequests).toBeLessThanOrEqual(2);
      } else {
        // Older kernels: the directory is walked in batches of 64 entries, each its own turn of the loop.
        expect(many.asyncRequests).toBeGreaterThanOrEqual(2 * Math.ceil(5000 / 64));
      }
    });
  },
);

describe('startProcessMetrics', () => {
  it('without /proc (not Linux): CPU and memory only, no thread or descriptor series', async () => {
    const meter = harness.meterProvider.getMeter('t');
    const stop = startProcessMetrics(meter, undefined);
    try {
      const names = [...(await harness.collect()).keys()].sort();
      expect(names).toEqual([INSTRUMENTS.processCpuTime.name, INSTRUMENTS.processMemoryUsage.name]);
    } finally {
      stop();
    }
  });

  it('a failing /proc read costs its own series only, reported once', async () => {
    const warnings = captureDiag();
    const broken: ProcSource = {
      status: () => {
        throw new Error('no status');
      },
      openDescriptors: () => {
        throw new Error('no fds');
      },
    };
    const stop = startProcessMetrics(harness.meterProvider.getMeter('t'), broken);
    try {
      await harness.collect();
      const names = [...(await harness.collect()).keys()].sort();
      expect(names).toEqual([INSTRUMENTS.processCpuTime.name, INSTRUMENTS.processMemoryUsage.name]);
      expect(warnings.lines('warn').filter((l) => l.includes('thread count'))).toHaveLength(1);
      expect(warnings.lines('warn').filter((l) => l.includes('file descriptors'))).toHaveLength(1);
    } finally {
      stop();
      warnings.stop();
    }
  });

  it('stop() unregisters the callback: values freeze at the last collection; stop twice is fine', async () => {
    const stop = startProcessMetrics(harness.meterProvider.getMeter('t'), undefined);
    const user = async () =>
      counterValue(await harness.collect(), INSTRUMENTS.processCpuTime.name, { [ATTR_CPU_MODE]: 'user' });
    // Burns until the process has used 20 ms more user CPU: a wall-clock busy loop on a loaded
    // machine may be scheduled out for all of its time and use none.
    const burn = () => {
      const until = process.cpuUsage().user + 20_000;
      while (process.cpuUsage().user < until) {}
    };
    const first = await user();
    burn();
    const second = await user();
    expect(second).toBeGreaterThan(first!);
    stop();
    stop();
    const third = await user();
    burn();
    // Cumulative export keeps the last observed value; an unregistered callback never updates it.
    expect(await user()).toBe(third);
  });

  it('threadsOf reads the Threads line and nothing else', () => {
    expect(threadsOf('Name:\tnode\nThreads:\t11\nSigQ:\t0/1\n')).toBe(11);
    expect(threadsOf('Name:\tnode\nThreadsX:\t11\n')).toBeUndefined();
    expect(threadsOf('')).toBeUndefined();
  });
});
