// A bad number is dropped, never recorded and never thrown, with one diag warning per kind
// of mistake (per recorder and field), naming the recorder, the field, the value and what
// is allowed. recordVerify drops only the duration point: the outcome still counts.

import { INSTRUMENTS } from '@gym/constants';
import {
  captureDiag,
  createMetricHarness,
  type DiagCapture,
  gaugeValue,
  histogramTotal,
  type MetricHarness,
} from '@gym/test-kit';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { diag } from '@opentelemetry/api';
import { freshMetrics, type MetricsModule } from './support/fresh-metrics.js';

let gym: MetricsModule;
let harness: MetricHarness;
let logger: DiagCapture;

beforeEach(async () => {
  gym = await freshMetrics();
  harness = createMetricHarness();
  logger = captureDiag();
  gym.declareOrchestrator();
});

afterEach(async () => {
  await harness.shutdown();
  diag.disable();
});

const badDurations: ReadonlyArray<readonly [string, unknown]> = [
  ['negative', -1],
  ['NaN', Number.NaN],
  ['infinite', Number.POSITIVE_INFINITY],
  ['infinite', Number.NEGATIVE_INFINITY],
  ['not a number', '125'],
  ['not a number', undefined],
];

describe('invalid durations', () => {
  it('recordRolloutDuration drops each kind and warns once per kind', async () => {
    const call = (value: unknown) =>
      new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordRolloutDuration(value as number);
    for (const [, value] of badDurations) {
      expect(() => call(value)).not.toThrow();
      call(value); // the same mistake again: no second warning
    }
    expect((await harness.collect()).size).toBe(0);
    expectOneWarningPerKind('recordRolloutDuration', 'The call was dropped (nothing recorded)');
  });

  it('recordVerify drops each bad duration point, warns once per kind, and still counts every outcome', async () => {
    for (const [, value] of badDurations) {
      expect(() =>
        new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordVerify(value as number, false),
      ).not.toThrow();
      new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordVerify(value as number, false);
    }
    const collected = await harness.collect();
    expect(collected.has(INSTRUMENTS.verifyDuration.name)).toBe(false);
    // Twelve failed calls, every one counted: the rate is exported, and it is 0.
    expect(gaugeValue(collected, INSTRUMENTS.verifySuccessRate.name)).toBe(0);
    expectOneWarningPerKind(
      'recordVerify',
      'The duration point was dropped; the outcome still counts in the success rate',
    );
  });

  /** -Infinity and +Infinity are one kind; '125' and undefined are one kind. */
  function expectOneWarningPerKind(recorder: string, consequence: string): void {
    const warnings = logger.from('@gym/metrics:');
    expect(warnings.map((w) => w.level)).toEqual(['warn', 'warn', 'warn', 'warn']);
    const kinds = ['negative', 'NaN', 'infinite', 'not a number'];
    warnings.forEach((warning, i) => {
      expect(warning.message).toContain(`${recorder}: ms = `);
      expect(warning.message).toContain(`is ${kinds[i]}`);
      expect(warning.message).toContain('allowed: a finite number of milliseconds >= 0');
      expect(warning.message).toContain(consequence);
    });
    expect(warnings[0]?.message).toContain('ms = number -1 ');
    expect(warnings[3]?.message).toContain('ms = string "125" ');
  }

  it('an invalid duration does not hide a failure: the outcome counts, only the duration point is dropped', async () => {
    const options = { meterProvider: harness.meterProvider };
    new gym.GymMetrics(options).recordVerify(Number.NaN, false);
    new gym.GymMetrics(options).recordVerify(-5, false);
    new gym.GymMetrics(options).recordVerify(10, true);
    const collected = await harness.collect();
    expect(gaugeValue(collected, INSTRUMENTS.verifySuccessRate.name)).toBeCloseTo(1 / 3, 12);
    expect(histogramTotal(collected, INSTRUMENTS.verifyDuration.name)).toEqual({ count: 1, sum: 10 });
  });

  it('a non-boolean succeeded drops the call with one warning', async () => {
    const options = { meterProvider: harness.meterProvider };
    new gym.GymMetrics(options).recordVerify(10, 'yes' as unknown as boolean);
    new gym.GymMetrics(options).recordVerify(10, 1 as unknown as boolean);
    expect((await harness.collect()).size).toBe(0);
    const warnings = logger.from('@gym/metrics:');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain(
      'recordVerify: succeeded = string "yes" is not a boolean; allowed: true or false',
    );
  });

  it('warns even while metrics are off (a bug is a bug), and records nothing', () => {
    gym.recordRolloutDuration(-1);
    expect(logger.from('@gym/metrics:')).toHaveLength(1);
  });

  it('valid values still record after invalid ones', async () => {
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordRolloutDuration(-1);
    new gym.GymMetrics({ meterProvider: harness.meterProvider }).recordRolloutDuration(125);
    expect(histogramTotal(await harness.collect(), INSTRUMENTS.rolloutDuration.name)).toEqual({ count: 1, sum: 125 });
  });
});

describe('invalid server counts', () => {
  it('drops negative, non-integer, NaN and infinite counts, once per kind, and keeps the last good value', async () => {
    const options = { meterProvider: harness.meterProvider };
    new gym.GymMetrics(options).recordActiveServers(4);
    for (const value of [-1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, -2, 0.1]) {
      expect(() => new gym.GymMetrics(options).recordActiveServers(value)).not.toThrow();
    }
    expect(gaugeValue(await harness.collect(), INSTRUMENTS.serversActive.name)).toBe(4);
    const warnings = logger.from('@gym/metrics:').map((w) => w.message);
    expect(warnings).toHaveLength(4);
    expect(warnings[0]).toContain('recordActiveServers: count = number -1 is negative; allowed: an integer >= 0');
    expect(warnings[1]).toContain('count = number 2.5 is not an integer');
    expect(warnings[2]).toContain('count = number NaN is NaN');
    expect(warnings[3]).toContain('count = number Infinity is infinite');
  });
});
