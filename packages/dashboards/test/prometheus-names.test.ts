// The names the dashboard and rules select are the names a real OpenTelemetry JS Prometheus
// exporter writes: every series of the catalog is created with its kind and unit in a real
// MeterProvider, serialised by the real exporter, and looked up in that text.

import { ATTR_OPERATION, INSTRUMENTS } from '@gym/constants';
import { generate, sanitizeName } from '@gym/dashboards';
import { describe, expect, it } from '@jest/globals';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import {
  COLLECTOR_UNIT_SUFFIXES,
  checkNameSuffixes,
  PROMETHEUS_KIND,
  parseNameSuffix,
  prometheusNames,
} from '../src/prometheus-names.js';
import { LABELS } from '../src/series.js';

async function exposition(): Promise<string> {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  const meter = provider.getMeter('probe');
  const attributes = { [ATTR_OPERATION]: 'verify' };
  for (const { name, kind, unit } of Object.values(INSTRUMENTS)) {
    const options = unit === '' ? {} : { unit };
    if (PROMETHEUS_KIND[kind] === 'histogram') meter.createHistogram(name, options).record(3, attributes);
    else if (PROMETHEUS_KIND[kind] === 'counter') meter.createCounter(name, options).add(1, attributes);
    else meter.createUpDownCounter(name, options).add(1, attributes);
  }
  const { resourceMetrics } = await exporter.collect();
  await provider.shutdown();
  return new PrometheusSerializer().serialize(resourceMetrics);
}

describe('prometheusNames against the real exporter', () => {
  it('finds every catalogued series under the name the exporter writes, with the type it writes', async () => {
    const text = await exposition();
    const expectedType = { histogram: 'histogram', counter: 'counter', gauge: 'gauge' } as const;
    for (const instrument of Object.values(INSTRUMENTS)) {
      const names = prometheusNames(instrument);
      const kind = PROMETHEUS_KIND[instrument.kind];
      const typeName = kind === 'counter' ? names.series : names.base;
      expect(text).toContain(`# TYPE ${typeName} ${expectedType[kind]}\n`);
      const sample = new RegExp(`^${names.series}\\{`, 'm');
      expect(text).toMatch(sample);
      if (kind === 'histogram') {
        expect(text).toMatch(new RegExp(`^${names.sum}\\{`, 'm'));
        expect(text).toMatch(new RegExp(`^${names.count}\\{`, 'm'));
      }
    }
  });

  it('adds no unit suffix and keeps a counter that already ends in _total as is', async () => {
    const text = await exposition();
    expect(prometheusNames(INSTRUMENTS.verifyDuration).bucket).toBe('gym_verify_duration_ms_bucket');
    expect(prometheusNames(INSTRUMENTS.processCpuTime).series).toBe('process_cpu_time_total');
    expect(text).toContain('process_cpu_time_total{');
    expect(text).not.toContain('process_cpu_time_seconds');
    expect(prometheusNames(INSTRUMENTS.admissionTimeouts).series).toBe('gym_concurrency_admission_timeouts_total');
    expect(text).not.toContain('_total_total');
    expect(prometheusNames(INSTRUMENTS.gcDuration).bucket).toBe('v8js_gc_duration_bucket');
  });

  it('writes attribute keys as the labels the exporter writes', async () => {
    const text = await exposition();
    expect(text).toContain(`${LABELS.operation}="verify"`);
    expect(LABELS.operation).toBe('nemo_gym_resources_operation');
    expect(LABELS.runId).toBe('nemo_run_id');
    expect(LABELS.cpuMode).toBe('cpu_mode');
  });
});

describe('unit suffixes for pipelines that add them', () => {
  it('places a Collector unit suffix before _bucket and _total, and _ratio on gauges only', () => {
    expect(prometheusNames(INSTRUMENTS.verifyDuration, COLLECTOR_UNIT_SUFFIXES).bucket).toBe(
      'gym_verify_duration_ms_milliseconds_bucket',
    );
    expect(prometheusNames(INSTRUMENTS.processCpuTime, COLLECTOR_UNIT_SUFFIXES).series).toBe(
      'process_cpu_time_seconds_total',
    );
    expect(prometheusNames(INSTRUMENTS.processMemoryUsage, COLLECTOR_UNIT_SUFFIXES).series).toBe(
      'process_memory_usage_bytes',
    );
    expect(prometheusNames(INSTRUMENTS.verifySuccessRate, COLLECTOR_UNIT_SUFFIXES).series).toBe(
      'gym_verify_success_rate_ratio',
    );
    expect(prometheusNames(INSTRUMENTS.sandboxCreateRetry, COLLECTOR_UNIT_SUFFIXES).series).toBe(
      'gym_sandbox_create_retry_total',
    );
    expect(prometheusNames(INSTRUMENTS.concurrencyQueueDepth, COLLECTOR_UNIT_SUFFIXES).series).toBe(
      'gym_concurrency_queue_depth',
    );
  });

  it('does not repeat a suffix the name already ends with', () => {
    const seconds = { name: 'x.duration_seconds', kind: 'histogram', unit: 's' } as const;
    expect(prometheusNames(seconds, COLLECTOR_UNIT_SUFFIXES).bucket).toBe('x_duration_seconds_bucket');
  });

  it('parses <unit>=<suffix> and the collector preset', () => {
    expect(parseNameSuffix('ms=milliseconds')).toEqual([{ unit: 'ms', suffix: 'milliseconds' }]);
    expect(parseNameSuffix('collector')).toBe(COLLECTOR_UNIT_SUFFIXES);
  });

  it.each([
    ['no equals sign', 'milliseconds'],
    ['an unknown unit', 'h=hours'],
    ['an empty suffix', 'ms='],
    ['a suffix that is not a name', 'ms=milli seconds'],
    ['a suffix with a leading underscore', 'ms=_ms'],
    ['a huge string', `ms=${'a'.repeat(100_000)}`],
    ['a Prometheus type suffix (total)', '1=total'],
    ['a Prometheus type suffix (bucket)', 'ms=Bucket'],
  ])('refuses %s with a RangeError naming the value and what is allowed', (_what, value) => {
    const check = () => checkNameSuffixes(parseNameSuffix(value));
    expect(check).toThrow(RangeError);
    expect(check).toThrow(JSON.stringify(value.slice(0, 20)).slice(0, -1));
    try {
      check();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(value.includes('=') ? /unit one of ms, / : /"collector" or <unit>=<suffix>/);
      expect(message.length).toBeLessThan(600);
    }
  });

  it('refuses two rules giving one unit and kind different suffixes, naming both', () => {
    const conflicting = [...COLLECTOR_UNIT_SUFFIXES, { unit: 'ms', suffix: 'msec' }];
    expect(() => generate({ nameSuffixes: conflicting })).toThrow(/"ms=msec" conflicts with "ms=milliseconds"/);
    expect(() => generate({ nameSuffixes: [{ unit: '1', suffix: 'total' }] })).toThrow(RangeError);
    // The same suffix twice, or different suffixes for kinds that do not overlap, are fine.
    const compatible = [
      ...COLLECTOR_UNIT_SUFFIXES,
      { unit: 'ms', suffix: 'milliseconds' },
      { unit: '1', suffix: 'things', kinds: ['counter'] as const },
    ];
    const rules = generate({ nameSuffixes: compatible })['prometheus/gym-recording.rules.yml'];
    expect(rules).toContain(
      'ms -> _milliseconds; s -> _seconds; By -> _bytes; 1 -> _ratio (gauge); 1 -> _things (counter).',
    );
    expect(rules).toContain('rate(gym_sandbox_create_retry_things_total[5m])');
    expect(rules).toContain('gym_verify_duration_ms_milliseconds_bucket');
  });

  it('a huge list of repeated rules is checked in one pass and writes what one copy writes', () => {
    const one = [{ unit: 'ms', suffix: 'milliseconds' }];
    const many = new Array(200_000).fill(one[0]);
    expect(generate({ nameSuffixes: many })).toEqual(generate({ nameSuffixes: one }));
  });
});

describe('sanitizeName', () => {
  it('replaces every character outside [a-zA-Z0-9_] and collapses runs of underscores, as the exporter does', () => {
    expect(sanitizeName('gym.resources.operation.queue_duration_ms')).toBe('gym_resources_operation_queue_duration_ms');
    expect(sanitizeName('a.-b')).toBe('a_b');
    expect(sanitizeName('9lives')).toBe('_9lives');
  });
});
