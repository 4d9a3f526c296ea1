// A real SDK MeterProvider with a pull reader: `collect()` returns what an exporter would
// receive now, keyed by instrument name. Tests assert on SDK output, never on mocks.

import type { Attributes } from '@opentelemetry/api';
import {
  AggregationTemporality,
  type DataPoint,
  DataPointType,
  type Histogram,
  MeterProvider,
  type MetricData,
  MetricReader,
  type ViewOptions,
} from '@opentelemetry/sdk-metrics';

/** A MetricReader that collects only when asked (cumulative temporality, like Prometheus, unless told). */
export class PullMetricReader extends MetricReader {
  constructor(temporality: AggregationTemporality = AggregationTemporality.CUMULATIVE) {
    super({ aggregationTemporalitySelector: () => temporality });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

export interface MetricHarnessOptions {
  /** SDK views, e.g. to check that an explicit bucket override reaches the SDK. */
  readonly views?: ViewOptions[];
  /** The reader's temporality (cumulative unless told; delta shows only what changed since the last collection). */
  readonly temporality?: AggregationTemporality;
}

/** A provider plus a way to read everything it would export. */
export interface MetricHarness {
  readonly meterProvider: MeterProvider;
  readonly reader: PullMetricReader;
  /** Every metric with at least one data point, by instrument name. Collection errors throw. */
  collect(): Promise<Map<string, MetricData>>;
  /** Instrumentation scope names of every exported metric with points. */
  scopes(): Promise<string[]>;
  shutdown(): Promise<void>;
}

/** A fresh MeterProvider with its own pull reader. */
export function createMetricHarness(options: MetricHarnessOptions = {}): MetricHarness {
  const reader = new PullMetricReader(options.temporality);
  const meterProvider = new MeterProvider({ readers: [reader], views: options.views ?? [] });
  return {
    meterProvider,
    reader,
    collect: () => collectMetrics(reader),
    async scopes() {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics
        .filter((s) => s.metrics.some((m) => m.dataPoints.length > 0))
        .map((s) => s.scope.name);
    },
    shutdown: () => meterProvider.shutdown(),
  };
}

/**
 * Every metric `reader` would export now with at least one data point, by instrument name.
 * Collection errors throw. For tests that pass readers around rather than harnesses.
 */
export async function collectMetrics(reader: MetricReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics, errors } = await reader.collect();
  if (errors.length > 0) throw new AggregateError(errors, 'metric collection failed');
  const byName = new Map<string, MetricData>();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.dataPoints.length > 0) byName.set(metric.descriptor.name, metric);
    }
  }
  return byName;
}

/** True when both attribute sets hold exactly the same keys and values. */
export function sameAttributes(a: Attributes, b: Attributes): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

/** The metric named `name`; throws (naming what was exported) when it is absent. */
export function findMetric(collected: Map<string, MetricData>, name: string): MetricData {
  const metric = collected.get(name);
  if (metric === undefined) {
    throw new Error(`${name} was not exported; exported: ${[...collected.keys()].join(', ') || 'nothing'}`);
  }
  return metric;
}

/** Every point of `name` as { attributes, value }; an absent metric has no points. */
export function pointsOf<T = number | Histogram>(
  collected: Map<string, MetricData>,
  name: string,
): { attributes: Attributes; value: T }[] {
  const metric = collected.get(name);
  if (metric === undefined) return [];
  return (metric.dataPoints as DataPoint<T>[]).map((p) => ({ attributes: p.attributes, value: p.value }));
}

/** The attribute sets `name` was recorded with. */
export function attributeSets(collected: Map<string, MetricData>, name: string): Attributes[] {
  return pointsOf(collected, name).map((p) => p.attributes);
}

function onePoint<T>(
  collected: Map<string, MetricData>,
  name: string,
  kinds: DataPointType[],
  attributes: Attributes | undefined,
): DataPoint<T> {
  const metric = findMetric(collected, name);
  if (!kinds.includes(metric.dataPointType)) {
    throw new Error(
      `${name} is a ${DataPointType[metric.dataPointType]}, not a ${kinds.map((k) => DataPointType[k]).join(' or ')}`,
    );
  }
  const points = metric.dataPoints as DataPoint<T>[];
  if (attributes === undefined) {
    if (points.length !== 1) throw new Error(`${name} has ${points.length} points, expected 1`);
    return points[0] as DataPoint<T>;
  }
  const point = points.find((p) => sameAttributes(p.attributes, attributes));
  if (point === undefined) {
    throw new Error(
      `${name} has no point with attributes ${JSON.stringify(attributes)}; it has ${JSON.stringify(points.map((p) => p.attributes))}`,
    );
  }
  return point;
}

/** The histogram value of `name` (its only point, or the point with exactly `attributes`). */
export function histogramPoint(collected: Map<string, MetricData>, name: string, attributes?: Attributes): Histogram {
  return onePoint<Histogram>(collected, name, [DataPointType.HISTOGRAM], attributes).value;
}

/** The gauge value of `name` (its only point, or the point with exactly `attributes`). */
export function gaugeValue(collected: Map<string, MetricData>, name: string, attributes?: Attributes): number {
  return onePoint<number>(collected, name, [DataPointType.GAUGE], attributes).value;
}

/** The (up-down / observable) counter value of `name` (its only point, or the one with `attributes`). */
export function counterValue(collected: Map<string, MetricData>, name: string, attributes?: Attributes): number {
  return onePoint<number>(collected, name, [DataPointType.SUM], attributes).value;
}

/**
 * A histogram's total over all its points: the count and sum recorded, whatever attributes split
 * them into points (both 0 when it was not exported). Use it where a test means "everything
 * recorded", so that a new attribute on the instrument does not break it.
 */
export function histogramTotal(collected: Map<string, MetricData>, name: string): { count: number; sum: number } {
  return pointsOf<Histogram>(collected, name).reduce(
    (total, p) => ({ count: total.count + p.value.count, sum: total.sum + (p.value.sum ?? 0) }),
    { count: 0, sum: 0 },
  );
}

/** Total count of a histogram over all its points (0 when it was not exported). */
export function histogramCount(collected: Map<string, MetricData>, name: string): number {
  return histogramTotal(collected, name).count;
}
