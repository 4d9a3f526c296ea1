// The /proc reader against fixture files (exact numbers, edge cases a live process cannot
// be made to show on demand: pid reuse, zombies, kernel threads without VmRSS).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allocationAttributes, createProcessResourceProvider, type ProcessSandboxHandle } from '@gym/sandbox-telemetry';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'fake-proc-'));
  jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }); // performance.now() moves by hand
});
afterEach(() => {
  jest.useRealTimers();
  rmSync(root, { recursive: true, force: true });
});

/** Writes /proc/<pid>/stat and status the way Linux formats them. */
function writeProc(
  pid: number,
  { comm = 'node', state = 'S', utime = 0, stime = 0, start = 12345, rssKb, hwmKb }: Record<string, unknown> = {},
) {
  const dir = join(root, String(pid));
  mkdirSync(dir, { recursive: true });
  // Fields 1..22 (then more): pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
  // utime stime cutime cstime priority nice num_threads itrealvalue starttime vsize rss ...
  writeFileSync(
    join(dir, 'stat'),
    `${pid} (${comm}) ${state} 1 ${pid} ${pid} 0 -1 4194304 100 0 0 0 ${utime} ${stime} 7 3 20 0 11 0 ${start} 123456789 2560 18446744073709551615\n`,
  );
  const lines = [`Name:\t${comm}`, `State:\t${state} (sleeping)`, `Pid:\t${pid}`];
  if (hwmKb !== undefined) lines.push(`VmHWM:\t  ${hwmKb} kB`);
  if (rssKb !== undefined) lines.push(`VmRSS:\t  ${rssKb} kB`);
  lines.push('Threads:\t11');
  writeFileSync(join(dir, 'status'), `${lines.join('\n')}\n`);
}

const provider = () => createProcessResourceProvider({ procRoot: root, hostname: 'test-host' });
const handle = (pid: number, extra: Partial<ProcessSandboxHandle> = {}): ProcessSandboxHandle => ({
  id: `sbx-${pid}`,
  owned: true,
  pid,
  ...extra,
});

describe('resourceSample', () => {
  it('reads CPU seconds and memory; the first sample has no CPU rate', async () => {
    writeProc(41, { utime: 150, stime: 50, rssKb: 102_400, hwmKb: 204_800 });
    await expect(provider().resourceSample(handle(41))).resolves.toEqual({
      'nemo.gym.sandbox.resource.cpu_seconds': 2,
      'nemo.gym.sandbox.resource.memory_mib': 100,
      'nemo.gym.sandbox.resource.memory_peak_mib': 200,
    });
  });

  it('the CPU rate is cores used since the previous sample of the same handle', async () => {
    const p = provider();
    const h = handle(42);
    writeProc(42, { utime: 100, stime: 0, rssKb: 1024 });
    await p.resourceSample(h);
    writeProc(42, { utime: 200, stime: 100, rssKb: 2048 }); // +2 CPU seconds
    jest.advanceTimersByTime(4_000); // over 4 s
    await expect(p.resourceSample(h)).resolves.toEqual({
      'nemo.gym.sandbox.resource.cpu_seconds': 3,
      'nemo.gym.sandbox.resource.cpu': 0.5,
      'nemo.gym.sandbox.resource.memory_mib': 2,
    });
    // Another handle object of the same pid keeps its own history.
    await expect(p.resourceSample(handle(42))).resolves.not.toHaveProperty(['nemo.gym.sandbox.resource.cpu']);
  });

  it('handles a command name with spaces and parentheses', async () => {
    writeProc(43, { comm: 'evil) S 1 2 (name', utime: 300, rssKb: 512 });
    await expect(provider().resourceSample(handle(43))).resolves.toMatchObject({
      'nemo.gym.sandbox.resource.cpu_seconds': 3,
      'nemo.gym.sandbox.resource.memory_mib': 0.5,
    });
  });

  it('honours clockTicksPerSecond', async () => {
    writeProc(44, { utime: 300 });
    const p = createProcessResourceProvider({ procRoot: root, clockTicksPerSecond: 1000 });
    await expect(p.resourceSample(handle(44))).resolves.toEqual({ 'nemo.gym.sandbox.resource.cpu_seconds': 0.3 });
  });

  it('omits memory the kernel does not report (no invented 0)', async () => {
    writeProc(45, { utime: 1 });
    const sample = await provider().resourceSample(handle(45));
    expect(Object.keys(sample)).toEqual(['nemo.gym.sandbox.resource.cpu_seconds']);
  });

  it('rejects when the process is gone', async () => {
    await expect(provider().resourceSample(handle(46))).rejects.toThrow(
      /process 46 is gone \(cannot read .*: ENOENT\)/,
    );
  });

  it('rejects for a zombie', async () => {
    writeProc(47, { state: 'Z' });
    await expect(provider().resourceSample(handle(47))).rejects.toThrow('process 47 has exited (state Z)');
  });

  it('rejects when the pid now belongs to another process', async () => {
    const p = provider();
    const h = handle(48);
    writeProc(48, { start: 1000, rssKb: 1 });
    await p.resourceSample(h);
    writeProc(48, { start: 2000, rssKb: 1 });
    await expect(p.resourceSample(h)).rejects.toThrow('process 48 is gone (its pid now belongs to another process)');
  });

  it('rejects a malformed stat file', async () => {
    mkdirSync(join(root, '49'));
    writeFileSync(join(root, '49', 'stat'), 'garbage');
    writeFileSync(join(root, '49', 'status'), '');
    await expect(provider().resourceSample(handle(49))).rejects.toThrow('malformed stat line');
  });
});

describe('resourceAllocation', () => {
  it('names the process and host and invents no amount', () => {
    const allocation = provider().resourceAllocation(handle(50));
    expect(allocation).toEqual({
      source: 'local-process',
      designator: { kind: 'process', id: '50' },
      host: { kind: 'host', id: 'test-host' },
      components: [{ name: 'process', requests: {}, limits: {} }],
    });
    expect(allocationAttributes(allocation)).toEqual({
      'nemo.gym.sandbox.allocation.source': 'local-process',
      'nemo.gym.sandbox.allocation.designator.kind': 'process',
      'nemo.gym.sandbox.allocation.designator.id': '50',
      'nemo.gym.sandbox.allocation.host.kind': 'host',
      'nemo.gym.sandbox.allocation.host.id': 'test-host',
      'nemo.gym.sandbox.allocation.components': 'process',
      'nemo.gym.sandbox.allocation.component.process.requests.unspecified': 'cpu,disk_gib,gpu,gpu_type,memory_mib',
      'nemo.gym.sandbox.allocation.component.process.limits.unspecified': 'cpu,disk_gib,gpu,gpu_type,memory_mib',
    });
  });

  it('reports the limits the launcher put on the handle', () => {
    const allocation = provider().resourceAllocation(handle(51, { limits: { memoryMib: 256 } }));
    expect(allocation.components).toEqual([{ name: 'process', requests: {}, limits: { memoryMib: 256 } }]);
  });

  it('reports the handle as it is: a bad limit is the writer’s to drop, not a reason to throw', () => {
    const allocation = provider().resourceAllocation(handle(52, { limits: { memoryMib: -1 } }));
    expect(allocation.components[0]!.limits).toEqual({ memoryMib: -1 });
  });
});

it.each([
  [{ procRoot: '' }, 'procRoot must be a non-empty path; got string ""'],
  [{ clockTicksPerSecond: 0 }, 'clockTicksPerSecond must be a finite number > 0; got number 0'],
  [{ hostname: '' }, 'hostname must be a non-empty string; got string ""'],
])('refuses the option %j, naming it (a programming error)', (options, message) => {
  expect(() => createProcessResourceProvider(options)).toThrow(message);
});
