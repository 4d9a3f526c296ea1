// What the sampler says through diag: each kind of trouble once per process, however many
// samplers hit it, with the reason, while every occurrence is still counted in stats.
// (One file of its own: "once per process" is module state, so the order below matters.)

import { type ResourceProvider, ResourceSampler, type SandboxAttributes } from '@gym/sandbox-telemetry';
import { createSpanHarness, type DiagCapture } from '@gym/test-kit';
import { afterAll, beforeAll, beforeEach, expect, it, jest } from '@jest/globals';
import type { Tracer, TracerProvider } from '@opentelemetry/api';
import { captureSandboxDiag, providerOf } from './support.js';

let diagnostics: DiagCapture;
let tracerProvider: TracerProvider;
beforeAll(() => {
  diagnostics = captureSandboxDiag();
});
afterAll(() => diagnostics.stop());
beforeEach(() => {
  jest.useFakeTimers();
  tracerProvider = createSpanHarness().tracerProvider;
  diagnostics.clear();
});

/** Runs three samplers over `provider` for three ticks each and stops them; returns their stats. */
async function runThree(provider: ResourceProvider, stopTimeoutSeconds?: number) {
  const samplers = [1, 2, 3].map(
    (i) =>
      new ResourceSampler(provider, { id: `sbx-${i}`, owned: true }, {}, 1, {
        tracerProvider,
        ...(stopTimeoutSeconds === undefined ? {} : { stopTimeoutSeconds }),
      }),
  );
  for (const sampler of samplers) sampler.start();
  await jest.advanceTimersByTimeAsync(3000);
  const stopped = Promise.all(samplers.map((sampler) => sampler.stop()));
  await jest.advanceTimersByTimeAsync(10_000);
  await stopped;
  return samplers.map((sampler) => sampler.stats);
}

it('a failing provider: one line for three samplers, with the error; every failure counted', async () => {
  const stats = await runThree({
    resourceSample: () => {
      throw new Error('process 123 is gone');
    },
  });
  expect(stats.map((s) => s.errors)).toEqual([4, 4, 4]);
  expect(diagnostics.lines('warn')).toHaveLength(1);
  expect(diagnostics.lines('warn')[0]).toContain(
    '@gym/sandbox-telemetry: sandbox sbx-1: the provider failed to sample',
  );
  expect(diagnostics.lines('warn')[0]).toContain('process 123 is gone');
  // Later failures of the same kind stay silent.
  await runThree({ resourceSample: () => Promise.reject(new Error('again')) });
  expect(diagnostics.lines('warn')).toHaveLength(1);
});

it('a non-object sample: one line naming what came back', async () => {
  const stats = await runThree({ resourceSample: () => 'oops' as unknown as SandboxAttributes });
  expect(stats.map((s) => s.errors)).toEqual([4, 4, 4]);
  expect(diagnostics.lines('warn')).toEqual([
    expect.stringContaining('the provider returned string "oops" instead of an attributes object'),
  ]);
});

it('bad values: one line naming the first key and value and the rule', async () => {
  const stats = await runThree({ resourceSample: () => ({ 'nemo.gym.sandbox.resource.cpu': Number.NaN }) });
  expect(stats.map((s) => s.dropped)).toEqual([4, 4, 4]);
  expect(diagnostics.lines('warn')).toEqual([
    expect.stringContaining(
      "dropped sample value nemo.gym.sandbox.resource.cpu=number NaN: keys must start with 'nemo.gym.sandbox.'",
    ),
  ]);
});

it('a final sample that does not settle: one line with the timeout', async () => {
  const stats = await runThree({ resourceSample: () => new Promise<SandboxAttributes>(() => {}) }, 0.5);
  expect(stats).toEqual([1, 2, 3].map(() => ({ samples: 1, errors: 1, dropped: 0, skipped: 2 })));
  expect(diagnostics.lines('warn')).toEqual([expect.stringContaining('the final sample did not settle within 500 ms')]);
});

it('a tracer that throws: one line with its error', async () => {
  tracerProvider = providerOf({
    startSpan: () => {
      throw new Error('tracer down');
    },
  } as unknown as Tracer);
  const stats = await runThree({ resourceSample: () => ({ 'nemo.gym.sandbox.resource.cpu': 1 }) });
  expect(stats.map((s) => s.errors)).toEqual([4, 4, 4]);
  expect(diagnostics.lines('warn')).toEqual([expect.stringContaining('tracer down')]);
});
