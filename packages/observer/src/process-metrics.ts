// The standard process.* metrics that Gym exports, under OpenTelemetry's names, units and
// attributes, written here rather than taken from @opentelemetry/host-metrics (see the
// README: that package is deprecated, labels CPU time `process.cpu.state` where Gym and
// current semantic conventions say `cpu.mode`, has neither thread nor descriptor counts, and
// loads `systeminformation` at import). Each is an observable instrument read at collection
// time only: between exports the observer costs nothing here.
//
// Thread and descriptor counts come from /proc on Linux; elsewhere those two instruments are
// not created at all (no series is better than a wrong 0).
//
// Counting descriptors never blocks the event loop in proportion to their number: it is one
// asynchronous stat of /proc/self/fd, whose size is the number of open descriptors (Linux 6.2
// and later); on an older kernel (size 0) the directory is walked asynchronously in batches of
// 64 entries, so each turn of the loop does a bounded amount of work. The collection callback is
// asynchronous for that, which the SDK awaits (with its own collection timeout).
//
// CPU time is reported from the first collection on: the SDK gives the first point of an
// observable counter a zero-length interval (start = end = that collection), so reporting the
// process's whole CPU time there would put all start-up CPU into no time at all. Each point's
// value is the CPU used between its start and end time instead.

import { readFileSync } from 'node:fs';
import { opendir, stat } from 'node:fs/promises';
import { ATTR_CPU_MODE, INSTRUMENTS } from '@gym/constants';
import { createInstrument } from '@gym/core/internal';
import type { Attributes, BatchObservableCallback, BatchObservableResult, Meter, Observable } from '@opentelemetry/api';
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
  /** Number of open descriptors; may reject. */
  openDescriptors(): Promise<number>;
}

const FD_DIRECTORY = '/proc/self/fd';
/** Entries per asynchronous read when /proc/self/fd must be walked (kernels before 6.2). */
const FD_BATCH = 64;

/** The number of open descriptors of this process, without blocking the event loop. */
async function countOpenDescriptors(): Promise<number> {
  // Linux 6.2+: the size of /proc/<pid>/fd is the number of open descriptors; stat opens none.
  const { size } = await stat(FD_DIRECTORY);
  if (size > 0) return size;
  let entries = 0;
  for await (const _entry of await opendir(FD_DIRECTORY, { bufferSize: FD_BATCH })) entries += 1;
  // The walk's own directory descriptor is in the listing.
  return entries - 1;
}

/** Linux's /proc for this process, or `undefined` elsewhere. */
export function linuxProc(): ProcSource | undefined {
  if (process.platform !== 'linux') return undefined;
  return {
    status: () => readFileSync('/proc/self/status', 'latin1'),
    openDescriptors: countOpenDescriptors,
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
  const cpuTime = createInstrument(meter, INSTRUMENTS.processCpuTime);
  const memory = createInstrument(meter, INSTRUMENTS.processMemoryUsage);
  const observables: Observable[] = [cpuTime, memory];
  let threads: Observable | undefined;
  let descriptors: Observable | undefined;
  if (proc !== undefined) {
    threads = createInstrument(meter, INSTRUMENTS.processThreadCount);
    descriptors = createInstrument(meter, INSTRUMENTS.processOpenFds);
    observables.push(threads, descriptors);
  }

  // CPU time at the first collection: the zero of every later point (see the top of this file).
  let cpuBase: NodeJS.CpuUsage | undefined;
  const callback: BatchObservableCallback = async (observe: BatchObservableResult) => {
    const usage = process.cpuUsage();
    cpuBase ??= usage;
    observe.observe(cpuTime, (usage.user - cpuBase.user) / MICROS_PER_SECOND, USER);
    observe.observe(cpuTime, (usage.system - cpuBase.system) / MICROS_PER_SECOND, SYSTEM);
    observe.observe(memory, process.memoryUsage.rss(), NO_ATTRIBUTES);
    if (proc === undefined) return;
    // /proc is outside input: a failed read costs its own series only.
    try {
      const count = threadsOf(proc.status());
      if (count !== undefined && threads !== undefined) observe.observe(threads, count, NO_ATTRIBUTES);
    } catch (error) {
      reporter.warnOnce('process-threads', 'reading the thread count failed; that collection has none', error);
    }
    try {
      const count = await proc.openDescriptors();
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
      meter.removeBatchObservableCallback(callback, observables);
    },
  };
}
