// A sampler over a real child process, read from the real /proc: when the child allocates,
// the samples' memory grows; when it burns CPU, CPU seconds grow; when it dies, samples
// fail and are counted, and stop() still writes its one final record. Real time here, so
// every wait is on a condition with a deadline, never a fixed sleep.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import {
  ATTR_SANDBOX_RESOURCE_CPU,
  ATTR_SANDBOX_RESOURCE_CPU_SECONDS,
  ATTR_SANDBOX_RESOURCE_FINAL,
  ATTR_SANDBOX_RESOURCE_MEMORY_MIB,
} from '@gym/constants';
import {
  createProcessResourceProvider,
  type ProcessSandboxHandle,
  ResourceSampler,
  recordAllocation,
  recordRequest,
} from '@gym/sandbox-telemetry';
import { createSpanHarness, waitFor } from '@gym/test-kit';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';

// The sandbox: on `grow` it keeps 16 MiB more (touched, so it is resident); on `burn` it
// spins until it has used 300 ms more CPU; it acknowledges every command on stdout.
const CHILD = `
const kept = [];
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (line === 'grow') { kept.push(Buffer.alloc(16 * 1024 * 1024, 1)); }
  if (line === 'burn') { const start = process.cpuUsage(); let x = 0;
    while (true) { const used = process.cpuUsage(start); if (used.user + used.system >= 300000) break; x += Math.sqrt(x + 1); } }
  process.stdout.write('ok ' + line + '\\n');
});
process.stdout.write('ready\\n');
`;

const DEADLINE_MS = 15_000;
let child: ChildProcessWithoutNullStreams | undefined;

afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }
  child = undefined;
});

/** Waits for `check` to hold (test-kit's `waitFor`), failing after the generous deadline. */
const until = <T>(what: string, check: () => T | undefined | false): Promise<T> => waitFor(what, check, DEADLINE_MS);

function startChild() {
  const proc = spawn(process.execPath, ['-e', CHILD], { stdio: ['pipe', 'pipe', 'pipe'] });
  child = proc;
  const lines: string[] = [];
  createInterface({ input: proc.stdout }).on('line', (line) => lines.push(line));
  const command = async (name: 'grow' | 'burn') => {
    const acks = lines.filter((line) => line === `ok ${name}`).length;
    proc.stdin.write(`${name}\n`);
    await until(`the child to ack ${name}`, () => lines.filter((line) => line === `ok ${name}`).length > acks);
  };
  return { proc, lines, command };
}

const memory = (span: ReadableSpan) => span.attributes[ATTR_SANDBOX_RESOURCE_MEMORY_MIB] as number | undefined;

describe('ResourceSampler over a real child process', () => {
  it('memory and CPU samples grow with the child; a dead child is counted, and stop still writes one final record', async () => {
    const t = createSpanHarness();
    const tracerProvider = t.tracerProvider;
    const { proc, lines, command } = startChild();
    await until('the child to start', () => lines.includes('ready'));

    const provider = createProcessResourceProvider();
    const carried = recordRequest({ resources: { cpu: 1, memoryMib: 512 } }, undefined, { tracerProvider });
    const parent = t.parent('sandbox.create');
    const handle: ProcessSandboxHandle = {
      id: `local-${proc.pid}`,
      owned: true,
      pid: proc.pid!,
      context: parent.context,
    };
    await recordAllocation(handle, provider, carried, { tracerProvider });
    const sampler = new ResourceSampler(provider, handle, carried, 0.1, { tracerProvider }); // the shortest interval allowed
    sampler.start();

    const samples = () => t.spans('gym.sandbox.resource.sample');
    await until('two samples', () => samples().length >= 2);
    const baseline = Math.max(...samples().map((span) => memory(span) ?? 0));
    const cpuBefore = samples().at(-1)!.attributes[ATTR_SANDBOX_RESOURCE_CPU_SECONDS] as number;
    expect(baseline).toBeGreaterThan(5); // a live node process is resident in tens of MiB

    for (let i = 0; i < 5; i++) await command('grow'); // +80 MiB
    const grown = await until('a sample 64 MiB above the baseline', () =>
      samples().find((span) => (memory(span) ?? 0) >= baseline + 64),
    );
    expect(memory(grown)).toBeGreaterThanOrEqual(baseline + 64);

    await command('burn'); // +300 ms CPU
    await until('CPU seconds to grow by 0.25 s', () =>
      samples().some((span) => (span.attributes[ATTR_SANDBOX_RESOURCE_CPU_SECONDS] as number) >= cpuBefore + 0.25),
    );
    expect(samples().some((span) => (span.attributes[ATTR_SANDBOX_RESOURCE_CPU] as number) > 0)).toBe(true);
    expect(sampler.stats.errors).toBe(0);

    const exited = once(proc, 'exit');
    proc.kill('SIGKILL');
    await exited;
    await until('a failed sample of the dead child', () => sampler.stats.errors >= 1);
    const before = samples().length;
    await sampler.stop();

    const all = samples();
    expect(all.length).toBe(before + 1);
    const finals = all.filter((span) => span.attributes[ATTR_SANDBOX_RESOURCE_FINAL] === true);
    expect(finals).toHaveLength(1);
    expect(finals[0]).toBe(all.at(-1));
    expect(memory(finals[0]!)).toBeUndefined(); // the child is gone: no invented value
    expect(finals[0]!.attributes['nemo.gym.sandbox.resource.sampler.errors']).toBe(sampler.stats.errors);
    for (const span of all) {
      expect(span.attributes['nemo.gym.sandbox.request.id']).toBe(carried['nemo.gym.sandbox.request.id']);
      expect(span.parentSpanContext?.spanId).toBe(parent.span.spanContext().spanId);
    }
    const [allocation] = t.spans('gym.sandbox.allocation');
    expect(allocation!.attributes['nemo.gym.sandbox.allocation.designator.id']).toBe(String(proc.pid));
    expect(allocation!.attributes['nemo.gym.sandbox.allocation.source']).toBe('local-process');
  });
});
