// A ResourceProvider for local child processes on Linux, read straight from /proc (no native
// module, no `ps`): only what the kernel says about that one process, not its descendants.

import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import {
  ATTR_SANDBOX_RESOURCE_CPU,
  ATTR_SANDBOX_RESOURCE_CPU_SECONDS,
  ATTR_SANDBOX_RESOURCE_MEMORY_MIB,
  ATTR_SANDBOX_RESOURCE_MEMORY_PEAK_MIB,
} from '@gym/constants';
import { invalidChoice } from '@gym/core/internal';
import type {
  ProcessResourceProvider,
  ProcessResourceProviderOptions,
  ProcessSandboxHandle,
  SandboxAttributeValue,
} from './types.js';

/**
 * A {@link ResourceProvider} for sandboxes that are local child processes (Linux). A sample
 * holds CPU seconds so far, cores in use since the previous sample of the same handle object,
 * and VmRSS / VmHWM in MiB.
 *
 * @throws RangeError for an option that is not one.
 */
export function createProcessResourceProvider(options?: ProcessResourceProviderOptions): ProcessResourceProvider {
  const procRoot = (options?.procRoot ?? '/proc').replace(/\/+$/, '');
  const ticks = options?.clockTicksPerSecond ?? 100; // USER_HZ on every mainstream Linux architecture
  const host = options?.hostname ?? hostname();
  if (options?.procRoot === '') throw invalidChoice('procRoot', '', 'a non-empty path');
  if (!(ticks > 0 && ticks !== Number.POSITIVE_INFINITY)) {
    throw invalidChoice('clockTicksPerSecond', ticks, 'a finite number > 0');
  }
  if (host === '') throw invalidChoice('hostname', host, 'a non-empty string');
  // The previous reading of each handle: start time (it tells pid reuse apart), CPU seconds, when.
  const previous = new WeakMap<ProcessSandboxHandle, { startTime: string; cpuSeconds: number; atMs: number }>();

  return {
    resourceAllocation: (handle) => ({
      source: 'local-process',
      designator: { kind: 'process', id: String(handle.pid) },
      host: { kind: 'host', id: host },
      components: [{ name: 'process', requests: handle.requests ?? {}, limits: handle.limits ?? {} }],
    }),

    async resourceSample(handle) {
      const dir = `${procRoot}/${handle.pid}`;
      const read = (name: string) => readFile(`${dir}/${name}`, 'utf8');
      const [stat, status] = await Promise.all([read('stat'), read('status')]).catch((error: NodeJS.ErrnoException) => {
        throw new Error(`process ${handle.pid} is gone (cannot read ${dir}: ${error.code ?? error})`, { cause: error });
      });
      const atMs = performance.now();
      // The command name (field 2) may hold spaces and parentheses, so fields count from the last
      // `)`: state is field 3, utime and stime 14 and 15, starttime 22.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const [state, startTime] = [fields[0], fields[19]];
      const cpuTicks = Number(fields[11]) + Number(fields[12]);
      if (!stat.includes(')') || state === undefined || startTime === undefined || !Number.isSafeInteger(cpuTicks)) {
        throw new Error(`malformed stat line: ${JSON.stringify(stat.slice(0, 120))}`);
      }
      if (state === 'Z' || state === 'X' || state === 'x') {
        throw new Error(`process ${handle.pid} has exited (state ${state})`);
      }
      const before = previous.get(handle);
      if (before !== undefined && before.startTime !== startTime) {
        throw new Error(`process ${handle.pid} is gone (its pid now belongs to another process)`);
      }
      const cpuSeconds = cpuTicks / ticks;
      const sample: Record<string, SandboxAttributeValue> = { [ATTR_SANDBOX_RESOURCE_CPU_SECONDS]: round(cpuSeconds) };
      if (before !== undefined && atMs > before.atMs) {
        const cores = Math.max(0, cpuSeconds - before.cpuSeconds) / ((atMs - before.atMs) / 1000);
        sample[ATTR_SANDBOX_RESOURCE_CPU] = round(cores);
      }
      for (const [key, attribute] of MEMORY) {
        const kb = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
        if (kb !== undefined) sample[attribute] = Number(kb) / 1024; // absent (a kernel thread): no invented 0
      }
      previous.set(handle, { startTime, cpuSeconds, atMs });
      return sample;
    },
  };
}

/** Rounds to 4 decimals: CPU times come in 10 ms ticks, more digits would be float noise. */
function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/** The `Key:   1234 kB` lines of `/proc/<pid>/status` a sample reports, in MiB. */
const MEMORY = [
  ['VmRSS', ATTR_SANDBOX_RESOURCE_MEMORY_MIB],
  ['VmHWM', ATTR_SANDBOX_RESOURCE_MEMORY_PEAK_MIB],
] as const;
