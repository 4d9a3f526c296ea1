// A real ResourceProvider for sandboxes that are local child processes on Linux, read
// straight from /proc: no native module, no `ps` subprocess per sample. It reports only
// what the kernel says: CPU time and resident memory of that one process, and an
// allocation that names the process and host but leaves every amount unspecified unless
// the launcher put a reservation or limit on the handle itself. A process that is gone
// (or whose pid now belongs to another process) makes the sample reject, which the sampler
// drops and counts.

import { readFile } from 'node:fs/promises';
import { hostname as osHostname } from 'node:os';
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
  ResourceAllocation,
  SandboxAttributeValue,
} from './types.js';

/** USER_HZ: the unit of CPU times in /proc/<pid>/stat on every mainstream Linux architecture. */
const DEFAULT_CLOCK_TICKS = 100;
/** The allocation source this provider reports. */
const PROCESS_ALLOCATION_SOURCE = 'local-process';
/** The one component of a process sandbox. */
const COMPONENT_NAME = 'process';

/** What one /proc/<pid>/stat line says that we use. */
interface ProcStat {
  /** One-letter state (R, S, D, Z, X, ...). */
  readonly state: string;
  /** utime + stime, in clock ticks. */
  readonly cpuTicks: number;
  /** Start time after boot, in clock ticks, kept as text: it identifies the process across pid reuse. */
  readonly startTime: string;
}

/** The previous reading of one handle, for CPU utilisation between samples. */
interface Previous {
  readonly startTime: string;
  readonly cpuSeconds: number;
  readonly atMs: number;
}

/**
 * Parses `/proc/<pid>/stat`. The command name (field 2) is in parentheses and may itself
 * contain spaces and parentheses, so fields are counted from the last `)`.
 */
export function parseProcStat(text: string): ProcStat {
  const close = text.lastIndexOf(')');
  const fields =
    close < 0
      ? []
      : text
          .slice(close + 1)
          .trim()
          .split(/\s+/);
  // After the comm: fields[0] is field 3 (state); utime, stime, starttime are fields 14, 15, 22.
  const state = fields[0];
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  const startTime = fields[19];
  if (state === undefined || startTime === undefined || !Number.isSafeInteger(utime) || !Number.isSafeInteger(stime)) {
    throw new Error(`malformed stat line: ${JSON.stringify(text.slice(0, 120))}`);
  }
  return { state, cpuTicks: utime + stime, startTime };
}

/** The value of a `Key:   1234 kB` line of `/proc/<pid>/status`, in kB, or undefined when absent. */
export function statusKilobytes(text: string, key: string): number | undefined {
  const match = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(text);
  return match === null ? undefined : Number(match[1]);
}

/**
 * A {@link ResourceProvider} for sandboxes that are local child processes (Linux).
 *
 * `resourceSample(handle)` reads `/proc/<pid>/stat` and `/proc/<pid>/status` and returns:
 * - `nemo.gym.sandbox.resource.cpu_seconds`: user + system CPU seconds so far;
 * - `nemo.gym.sandbox.resource.cpu`: CPU cores in use, averaged since the previous sample
 *   of the same handle object (absent on the first sample: one reading has no rate);
 * - `nemo.gym.sandbox.resource.memory_mib` / `…memory_peak_mib`: VmRSS / VmHWM in MiB
 *   (absent when the kernel does not report them).
 * It rejects when the process is gone, is a zombie, or its pid now belongs to a different
 * process (start time changed), so a sampler drops and counts that sample.
 *
 * `resourceAllocation(handle)` reports source `local-process`, designator
 * `{ kind: 'process', id: '<pid>' }`, host `{ kind: 'host', id: os.hostname() }` and one
 * component `process` whose requests and limits are the handle's own `requests` / `limits`
 * (what the launcher imposed), `{}` (all unspecified) otherwise. No number is invented.
 *
 * Only the one process is measured, not its descendants. CPU rates use `performance.now()`.
 *
 * @throws RangeError for an option that is not one (naming it and what is allowed).
 */
export function createProcessResourceProvider(options?: ProcessResourceProviderOptions): ProcessResourceProvider {
  const { procRoot, ticks, host } = checkOptions(options);
  const previous = new WeakMap<ProcessSandboxHandle, Previous>();

  return {
    resourceAllocation(handle: ProcessSandboxHandle): ResourceAllocation {
      return {
        source: PROCESS_ALLOCATION_SOURCE,
        designator: { kind: 'process', id: String(handle.pid) },
        host: { kind: 'host', id: host },
        components: [{ name: COMPONENT_NAME, requests: handle.requests ?? {}, limits: handle.limits ?? {} }],
      };
    },

    async resourceSample(handle: ProcessSandboxHandle): Promise<Record<string, SandboxAttributeValue>> {
      const pid = handle.pid;
      if (!Number.isSafeInteger(pid) || pid <= 0) throw invalidChoice('handle.pid', pid, 'a positive integer');
      const dir = `${procRoot}/${pid}`;
      let statText: string;
      let statusText: string;
      try {
        [statText, statusText] = await Promise.all([
          readFile(`${dir}/stat`, 'utf8'),
          readFile(`${dir}/status`, 'utf8'),
        ]);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException)?.code;
        throw new Error(`process ${pid} is gone (cannot read ${dir}: ${code ?? String(error)})`, { cause: error });
      }
      const atMs = performance.now();
      const stat = parseProcStat(statText);
      if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') {
        throw new Error(`process ${pid} has exited (state ${stat.state})`);
      }
      const before = previous.get(handle);
      if (before !== undefined && before.startTime !== stat.startTime) {
        throw new Error(`process ${pid} is gone (its pid now belongs to another process)`);
      }
      const cpuSeconds = stat.cpuTicks / ticks;
      const sample: Record<string, SandboxAttributeValue> = { [ATTR_SANDBOX_RESOURCE_CPU_SECONDS]: round(cpuSeconds) };
      if (before !== undefined && atMs > before.atMs) {
        sample[ATTR_SANDBOX_RESOURCE_CPU] = round(
          Math.max(0, cpuSeconds - before.cpuSeconds) / ((atMs - before.atMs) / 1000),
        );
      }
      const rss = statusKilobytes(statusText, 'VmRSS');
      if (rss !== undefined) sample[ATTR_SANDBOX_RESOURCE_MEMORY_MIB] = rss / 1024;
      const peak = statusKilobytes(statusText, 'VmHWM');
      if (peak !== undefined) sample[ATTR_SANDBOX_RESOURCE_MEMORY_PEAK_MIB] = peak / 1024;
      previous.set(handle, { startTime: stat.startTime, cpuSeconds, atMs });
      return sample;
    },
  };
}

/** Rounds to 4 decimals: CPU times come in 10 ms ticks, more digits would be float noise. */
function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

function checkOptions(options: ProcessResourceProviderOptions | undefined) {
  const procRoot = options?.procRoot ?? '/proc';
  const ticks = options?.clockTicksPerSecond ?? DEFAULT_CLOCK_TICKS;
  const host = options?.hostname ?? osHostname();
  if (typeof procRoot !== 'string' || procRoot === '') throw invalidChoice('procRoot', procRoot, 'a non-empty path');
  if (!(ticks > 0 && ticks !== Number.POSITIVE_INFINITY)) {
    throw invalidChoice('clockTicksPerSecond', ticks, 'a finite number > 0');
  }
  if (typeof host !== 'string' || host === '') throw invalidChoice('hostname', host, 'a non-empty string');
  return { procRoot: procRoot.replace(/\/+$/, ''), ticks, host };
}
