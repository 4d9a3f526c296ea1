// The standard process.* metrics under OpenTelemetry's names, units and attributes (why not
// @opentelemetry/host-metrics: docs/observer.md), as observables read at collection time only.
// CPU time is the process's total from `process.cpuUsage()`, as the semantic conventions define
// it: a rate is taken between two points. Threads and descriptors come from /proc on Linux;
// elsewhere those two instruments are not created (no series is better than a wrong 0).

import { readFileSync } from 'node:fs';
import { opendir, stat } from 'node:fs/promises';
import { ATTR_CPU_MODE, INSTRUMENTS } from '@gym/constants';
import { createInstrument } from '@gym/core/internal';
import type { Attributes, BatchObservableCallback, Meter, Observable } from '@opentelemetry/api';
import { NO_ATTRIBUTES, reporter } from './scope.js';

const USER: Attributes = Object.freeze({ [ATTR_CPU_MODE]: 'user' });
const SYSTEM: Attributes = Object.freeze({ [ATTR_CPU_MODE]: 'system' });
const THREADS_LINE = /^Threads:\s+(\d+)\s*$/m;
const FD_DIRECTORY = '/proc/self/fd';

/** Where /proc lives; a parameter so tests can make its reads fail. */
export interface ProcSource {
  status(): string; // the text of /proc/self/status, or throws
  openDescriptors(): Promise<number>;
}

/** The number of open descriptors, never blocking the event loop in proportion to it. */
async function countOpenDescriptors(): Promise<number> {
  // Linux 6.2+: the size of /proc/<pid>/fd is the number of open descriptors.
  const { size } = await stat(FD_DIRECTORY);
  if (size > 0) return size;
  // Older kernels: walked asynchronously, 64 entries per turn of the loop.
  let entries = 0;
  for await (const _entry of await opendir(FD_DIRECTORY, { bufferSize: 64 })) entries += 1;
  // The walk's own directory descriptor is in the listing.
  return entries - 1;
}

/** Linux's /proc for this process, or `undefined` elsewhere. */
export function linuxProc(): ProcSource | undefined {
  if (process.platform !== 'linux') return undefined;
  return { status: () => readFileSync('/proc/self/status', 'latin1'), openDescriptors: countOpenDescriptors };
}

/** The thread count in a /proc status text, or `undefined`. */
export function threadsOf(status: string): number | undefined {
  const match = THREADS_LINE.exec(status);
  return match === null ? undefined : Number(match[1]);
}

/** Creates the process instruments on `meter`; returns what unregisters them. May throw: the caller catches. */
export function startProcessMetrics(meter: Meter, proc: ProcSource | undefined): () => void {
  const cpuTime = createInstrument(meter, INSTRUMENTS.processCpuTime);
  const memory = createInstrument(meter, INSTRUMENTS.processMemoryUsage);
  const linux = proc && {
    proc,
    threads: createInstrument(meter, INSTRUMENTS.processThreadCount),
    descriptors: createInstrument(meter, INSTRUMENTS.processOpenFds),
  };
  const observables: Observable[] = linux ? [cpuTime, memory, linux.threads, linux.descriptors] : [cpuTime, memory];
  const callback: BatchObservableCallback = async (observe) => {
    const usage = process.cpuUsage();
    observe.observe(cpuTime, usage.user / 1e6, USER);
    observe.observe(cpuTime, usage.system / 1e6, SYSTEM);
    observe.observe(memory, process.memoryUsage.rss(), NO_ATTRIBUTES);
    if (linux === undefined) return;
    // /proc is outside input: a failed read costs its own series only.
    try {
      const count = threadsOf(linux.proc.status());
      if (count !== undefined) observe.observe(linux.threads, count, NO_ATTRIBUTES);
    } catch (error) {
      reporter.warnOnce('process-threads', 'reading the thread count failed; that collection has none', error);
    }
    try {
      observe.observe(linux.descriptors, await linux.proc.openDescriptors(), NO_ATTRIBUTES);
    } catch (error) {
      reporter.warnOnce('process-fds', 'counting open file descriptors failed; that collection has none', error);
    }
  };
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}
