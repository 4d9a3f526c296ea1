// The exported shape: instrument names, kinds, units, bucket boundaries and attribute keys,
// read back from a real SDK and held to the instrument table of @gym/constants (`INSTRUMENTS`),
// whose strings docs/telemetry.md's contract test holds to the contract.

import { readFileSync } from 'node:fs';
import { ATTR_EXECUTOR, ATTR_OPERATION, ATTR_OPERATION_OUTCOME, INSTRUMENTS } from '@gym/constants';
import { resourcesOperation } from '@gym/operations';
import { collectMetrics, counterValue, createMetricHarness, deferred, histogramPoint } from '@gym/test-kit';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Semaphore } from 'async-mutex';
import { SCOPE } from '../src/scope.js';
import { exportedShape, FakeClock, tableShapes } from './helpers.js';

afterEach(() => {
  jest.restoreAllMocks();
  jest.useRealTimers();
});

async function oneOperation() {
  const { meterProvider: provider, reader } = createMetricHarness();
  const clock = new FakeClock();
  await resourcesOperation(
    new Semaphore(1),
    { operation: 'judge', executor: 'inline', meterProvider: provider },
    () => {
      clock.time += 2;
    },
  );
  return { provider, reader };
}

describe('instruments', () => {
  it('exports exactly the four instruments: two histograms and two up-down counters, with their units and value types', async () => {
    const { reader } = await oneOperation();
    const { resourceMetrics } = await reader.collect();
    expect(resourceMetrics.scopeMetrics).toHaveLength(1);
    const scope = resourceMetrics.scopeMetrics[0]!;
    expect(scope.scope).toMatchObject({ name: '@gym/operations', version: SCOPE.version });
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect(scope.metrics.map(exportedShape).sort(byName)).toEqual(tableShapes(ATTR_OPERATION).sort(byName));
    expect(scope.metrics.map((m) => m.descriptor.name).sort()).toEqual(
      [
        INSTRUMENTS.operationQueueDuration.name,
        INSTRUMENTS.operationDuration.name,
        INSTRUMENTS.operationQueued.name,
        INSTRUMENTS.operationActive.name,
      ].sort(),
    );
  });

  it('carries exactly the attribute keys of Gym (executor not nested under operation; outcome on the duration only)', async () => {
    const { reader } = await oneOperation();
    const m = await collectMetrics(reader);
    const keys = (name: string) => m.get(name)!.dataPoints.map((p) => Object.keys(p.attributes).sort());
    for (const row of [
      INSTRUMENTS.operationQueueDuration,
      INSTRUMENTS.operationDuration,
      INSTRUMENTS.operationQueued,
      INSTRUMENTS.operationActive,
    ]) {
      expect(keys(row.name)).toEqual([[...row.attributes].sort()]);
    }
    expect(INSTRUMENTS.operationQueued.attributes).toEqual([ATTR_OPERATION, ATTR_EXECUTOR]);
    expect(INSTRUMENTS.operationDuration.attributes).toEqual([ATTR_OPERATION, ATTR_EXECUTOR, ATTR_OPERATION_OUTCOME]);
    expect(m.get(INSTRUMENTS.operationDuration.name)!.dataPoints[0]!.attributes).toEqual({
      [ATTR_OPERATION]: 'judge',
      [ATTR_EXECUTOR]: 'inline',
      [ATTR_OPERATION_OUTCOME]: 'ok',
    });
  });

  it('both histograms use INSTRUMENTS.operationDuration.boundaries, and values land in the bucket whose upper bound includes them', async () => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const clock = new FakeClock();
    const options = { operation: 'tool', executor: 'thread', meterProvider: provider } as const;
    for (const ms of [0, 1, 1.5, 5, 1_800_000, 1_800_001]) {
      await resourcesOperation(null, options, () => {
        clock.time += ms;
      });
    }
    const m = await collectMetrics(reader);
    const series = { [ATTR_OPERATION]: 'tool', [ATTR_EXECUTOR]: 'thread' };
    const queue = histogramPoint(m, INSTRUMENTS.operationQueueDuration.name, series);
    const run = histogramPoint(m, INSTRUMENTS.operationDuration.name, { ...series, [ATTR_OPERATION_OUTCOME]: 'ok' });
    expect(queue.buckets.boundaries).toEqual(INSTRUMENTS.operationQueueDuration.boundaries);
    expect(run.buckets.boundaries).toEqual(INSTRUMENTS.operationDuration.boundaries);
    expect(INSTRUMENTS.operationDuration.boundaries).toEqual(INSTRUMENTS.operationDuration.boundaries);
    //                          ≤1  ≤5 ≤10 …                                    ≤1.8M  >1.8M
    expect(run.buckets.counts).toEqual([2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    expect(queue.buckets.counts[0]).toBe(6); // unlimited work: every queue wait is 0
  });

  it('the scope version is the package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      name: string;
      version: string;
    };
    expect(SCOPE.version).toBe(pkg.version);
    expect(SCOPE.name).toBe(pkg.name);
  });
});

describe('caching per meter', () => {
  it('a re-initialised process (a new provider) gets fresh instruments and fresh live counts', async () => {
    const first = createMetricHarness();
    const second = createMetricHarness();
    const hold = deferred();
    const series = { [ATTR_OPERATION]: 'verify', [ATTR_EXECUTOR]: 'process' };
    const options = { operation: 'verify', executor: 'process' } as const;
    const running = resourcesOperation(null, { ...options, meterProvider: first.meterProvider }, () => hold.promise);
    await resourcesOperation(null, { ...options, meterProvider: second.meterProvider }, () => {});

    const a = await collectMetrics(first.reader);
    const b = await collectMetrics(second.reader);
    expect(counterValue(a, INSTRUMENTS.operationActive.name, series)).toBe(1);
    expect(counterValue(b, INSTRUMENTS.operationActive.name, series)).toBe(0);
    expect(histogramPoint(b, INSTRUMENTS.operationQueueDuration.name, series).count).toBe(1);
    hold.resolve();
    await running;
    expect(counterValue(await collectMetrics(first.reader), INSTRUMENTS.operationActive.name, series)).toBe(0);
  });

  it('only series that were used are reported by the live counts', async () => {
    const { reader } = await oneOperation();
    const m = await collectMetrics(reader);
    expect(m.get(INSTRUMENTS.operationQueued.name)!.dataPoints).toHaveLength(1);
    expect(m.get(INSTRUMENTS.operationActive.name)!.dataPoints).toHaveLength(1);
  });
});
