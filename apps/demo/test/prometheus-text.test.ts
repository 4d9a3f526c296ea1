// The summary's arithmetic: exposition parsing and the histogram_quantile port, checked
// against values worked out by hand from PromQL's definition.

import { describe, expect, it } from '@jest/globals';
import { histogramQuantile, parsePrometheusText, sumBuckets } from '../src/prometheus-text.js';
import { summariseOperations } from '../src/summary.js';

const EXPOSITION = `# HELP gym_resources_operation_queue_duration_ms time waiting
# TYPE gym_resources_operation_queue_duration_ms histogram
gym_resources_operation_queue_duration_ms_count{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",otel_scope_name="@gym/operations"} 10
gym_resources_operation_queue_duration_ms_bucket{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",le="10"} 2
gym_resources_operation_queue_duration_ms_bucket{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",le="100"} 6
gym_resources_operation_queue_duration_ms_bucket{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",le="+Inf"} 10
gym_resources_operation_duration_ms_count{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",nemo_gym_resources_operation_outcome="ok"} 9
gym_resources_operation_duration_ms_count{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",nemo_gym_resources_operation_outcome="timeout"} 1
gym_resources_operation_duration_ms_bucket{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",nemo_gym_resources_operation_outcome="ok",le="10"} 9
gym_resources_operation_duration_ms_bucket{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",nemo_gym_resources_operation_outcome="ok",le="100"} 9
gym_resources_operation_duration_ms_bucket{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",nemo_gym_resources_operation_outcome="ok",le="+Inf"} 9
gym_resources_operation_duration_ms_bucket{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",nemo_gym_resources_operation_outcome="timeout",le="10"} 0
gym_resources_operation_duration_ms_bucket{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",nemo_gym_resources_operation_outcome="timeout",le="100"} 1
gym_resources_operation_duration_ms_bucket{nemo_gym_resources_operation="verify",nemo_gym_resources_executor="subprocess",nemo_gym_resources_operation_outcome="timeout",le="+Inf"} 1
weird{a="quote \\" and \\\\ and \\n"} NaN
gym_servers_active 3 1700000000000
`;

describe('parsePrometheusText', () => {
  it('reads names, escaped labels, special values and timestamps', () => {
    const samples = parsePrometheusText(EXPOSITION);
    expect(samples).toHaveLength(14);
    const weird = samples.find((sample) => sample.name === 'weird');
    expect(weird?.labels.a).toBe('quote " and \\ and \n');
    expect(weird?.value).toBeNaN();
    expect(samples.find((sample) => sample.name === 'gym_servers_active')?.value).toBe(3);
  });

  it('skips lines it cannot read instead of guessing', () => {
    expect(parsePrometheusText('broken{a="x" 1\n{}\nok 2\nnovalue\n')).toEqual([{ name: 'ok', labels: {}, value: 2 }]);
  });
});

describe('histogramQuantile (PromQL histogram_quantile)', () => {
  const buckets = sumBuckets(parsePrometheusText(EXPOSITION), 'gym_resources_operation_queue_duration_ms', () => true);

  it('interpolates linearly inside the bucket that holds the rank', () => {
    // 10 observations: 2 in (0,10], 4 in (10,100], 4 above 100. p50: rank 5 → 10 + 90 × (3/4).
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(77.5, 10);
    // p10: rank 1 → 0 + 10 × (1/2).
    expect(histogramQuantile(0.1, buckets)).toBeCloseTo(5, 10);
  });

  it('answers the highest finite bound for a rank in the +Inf bucket', () => {
    expect(histogramQuantile(0.99, buckets)).toBe(100);
  });

  it('is NaN without observations or without a +Inf bucket', () => {
    expect(histogramQuantile(0.5, { bounds: [10, Number.POSITIVE_INFINITY], counts: [0, 0] })).toBeNaN();
    expect(histogramQuantile(0.5, { bounds: [10, 100], counts: [1, 2] })).toBeNaN();
  });

  it('sums the same bucket across series (servers, outcomes)', () => {
    const run = sumBuckets(parsePrometheusText(EXPOSITION), 'gym_resources_operation_duration_ms', () => true);
    expect(run).toEqual({ bounds: [10, 100, Number.POSITIVE_INFINITY], counts: [9, 10, 10] });
  });
});

describe('summariseOperations', () => {
  it('gives per-operation quantiles and outcome counts from the run histogram count', () => {
    const [verify, ...others] = summariseOperations(parsePrometheusText(EXPOSITION));
    expect(others).toHaveLength(0);
    expect(verify).toMatchObject({ operation: 'verify', executor: 'subprocess', calls: 10 });
    expect(Object.fromEntries(verify?.outcomes ?? [])).toEqual({ ok: 9, timeout: 1 });
    expect(verify?.queueP50).toBeCloseTo(77.5, 10);
    // run p50: rank 5 of 10, 9 in (0,10] → 10 × 5/9.
    expect(verify?.runP50).toBeCloseTo(50 / 9, 10);
  });
});
