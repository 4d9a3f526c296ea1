// The standard process.* metrics that Gym exports, under OpenTelemetry's names, units and
// attributes, written here rather than taken from @opentelemetry/host-metrics (see the
// README: that package is deprecated, labels CPU time `process.cpu.state` where Gym and
// current semantic conventions say `cpu.mode`, has neither thread nor descriptor counts, and
// loads `systeminformation` at import). Each is an observable instrument read at collection
// time only: between exports the observer costs nothing here.
//
// Thread and descriptor counts come from /proc on Linux; elsewhere those two instruments are
// not created at all (no series is better than a wrong 0).

import { readdirSync, readFileSync } from 'node:fs';
import {
  ATTR_CPU_MODE,
  METRIC_PROCESS_CPU_TIME,
  METRIC_PROCESS_MEMORY_USAGE,
  METRIC_PROCESS_OPEN_FD_COUNT,
  METRIC_PROCESS_THREAD_COUNT,
} from '@gym/constants';
import {
  type Attributes,
  type BatchObservableCallback,
  type BatchObservableResult,
  type Meter,
  type Observable,
  ValueType,
} from '@opentelemetry/api';
import { reporter } from './scope.js';

const USER: Attributes = Object.freeze({ [ATTR_CPU_MODE]: 'user' });
const SYSTEM: Attributes = Object.freeze({ [ATTR_CPU_MODE]: 'system' });
const NO_ATTRIBUTES: Attributes = Object.freeze({});
const MICROS_PER_SECOND = 1e6;
const THREADS_LINE = /^Threads:\s+(\d+)\s*$/m;

/** Where /proc lives; a parameter so tests can point it at a fixture directory. */
export interface ProcSource {
  /** `/proc/self/status` text, or throws. */
  status(): string;
  /** Number of open descriptors, or throws. */
  openDescriptors(): number;
}

/** Linux's /proc for this process, or `undefined` elsewhere. */
export function linuxProc(): ProcSource | undefined {
  if (process.platform !== 'linux') return undefined;
  return {
    status: () => readFileSync('/proc/self/status', 'latin1'),
    // Listing /proc/self/fd opens the directory itself, and that descriptor is in the listing.
    openDescriptors: () => readdirSync('/proc/self/fd').length - 1,
  };
}

/** The thread count in a /proc status text, or `undefined`. */
export function threadsOf(status: string): number | undefined {
  const match = THREADS_LINE.exec(status);
  return match === null ? undefined : Number(match[1]);
}

/** Registered process instruments; `stop()` unregisters the collection callback. */
export interface ProcessMetrics {
  stop(): void;
}

/**
 * Creates the process instruments on `meter` and registers one batch callback that reads
 * them at collection time. May throw (a broken meter): the caller catches.
 */
export function startProcessMetrics(meter: Meter, proc: ProcSource | undefined): ProcessMetrics {
  const cpuTime = meter.createObservableCounter(METRIC_PROCESS_CPU_TIME, {
    description: 'Total CPU seconds broken down by different CPU modes.',
    unit: 's',
    valueType: ValueType.DOUBLE,
  });
  const memory = meter.createObservableUpDownCounter(METRIC_PROCESS_MEMORY_USAGE, {
    description: 'The amount of physical memory in use (resident set size).',
    unit: 'By',
    valueType: ValueType.INT,
  });
  const observables: Observable[] = [cpuTime, memory];
  let threads: Observable | undefined;
  let descriptors: Observable | undefined;
  if (proc !== undefined) {
    threads = meter.createObservableUpDownCounter(METRIC_PROCESS_THREAD_COUNT, {
      description: 'Process threads count.',
      unit: '{thread}',
      valueType: ValueType.INT,
    });
    descriptors = meter.createObservableUpDownCounter(METRIC_PROCESS_OPEN_FD_COUNT, {
      description: 'Number of file descriptors in use by the process.',
      unit: '{count}',
      valueType: ValueType.INT,
    });
    observables.push(threads, descriptors);
  }

  const callback: BatchObservableCallback = (observe: BatchObservableResult) => {
    try {
      const usage = process.cpuUsage();
      observe.observe(cpuTime, usage.user / MICROS_PER_SECOND, USER);
      observe.observe(cpuTime, usage.system / MICROS_PER_SECOND, SYSTEM);
    } catch (error) {
      reporter.warnOnce('process-cpu', 'reading process CPU time failed; that collection has none', error);
    }
    try {
      observe.observe(memory, process.memoryUsage.rss(), NO_ATTRIBUTES);
    } catch (error) {
      reporter.warnOnce('process-memory', 'reading process memory failed; that collection has none', error);
    }
    if (proc === undefined) return;
    try {
      const count = threadsOf(proc.status());
      if (count !== undefined && threads !== undefined) observe.observe(threads, count, NO_ATTRIBUTES);
    } catch (error) {
      reporter.warnOnce('process-threads', 'reading the thread count failed; that collection has none', error);
    }
    try {
      const count = proc.openDescriptors();
      if (count >= 0 && descriptors !== undefined) observe.observe(descriptors, count, NO_ATTRIBUTES);
    } catch (error) {
      reporter.warnOnce('process-fds', 'counting open file descriptors failed; that collection has none', error);
    }
  };
  meter.addBatchObservableCallback(callback, observables);

  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        meter.removeBatchObservableCallback(callback, observables);
      } catch (error) {
        reporter.warnOnce('process-stop', 'unregistering the process metrics callback failed', error);
      }
    },
  };
}
