// Decodes OTLP/HTTP protobuf request bodies (what `@opentelemetry/exporter-*-otlp-proto` sends)
// with protobufjs, from the OTLP v1 message and field numbers written below as facts
// (opentelemetry-proto: common, resource, metrics, trace and the two collector services).
// Only what the tests read is declared; protobuf skips unknown fields. No .proto file, no
// protoc.

import protobuf from 'protobufjs';

/** `[field number, type, repeated?]` per field; types are protobuf scalars or message names. */
type Fields = Record<string, readonly [number, string, 'repeated'?]>;

const MESSAGES: Record<string, Fields> = {
  // opentelemetry/proto/common/v1/common.proto
  AnyValue: {
    stringValue: [1, 'string'],
    boolValue: [2, 'bool'],
    intValue: [3, 'int64'],
    doubleValue: [4, 'double'],
    arrayValue: [5, 'ArrayValue'],
    kvlistValue: [6, 'KeyValueList'],
    bytesValue: [7, 'bytes'],
  },
  ArrayValue: { values: [1, 'AnyValue', 'repeated'] },
  KeyValueList: { values: [1, 'KeyValue', 'repeated'] },
  KeyValue: { key: [1, 'string'], value: [2, 'AnyValue'] },
  InstrumentationScope: { name: [1, 'string'], version: [2, 'string'], attributes: [3, 'KeyValue', 'repeated'] },
  // opentelemetry/proto/resource/v1/resource.proto
  Resource: { attributes: [1, 'KeyValue', 'repeated'] },
  // opentelemetry/proto/metrics/v1/metrics.proto
  ResourceMetrics: { resource: [1, 'Resource'], scopeMetrics: [2, 'ScopeMetrics', 'repeated'] },
  ScopeMetrics: { scope: [1, 'InstrumentationScope'], metrics: [2, 'Metric', 'repeated'] },
  Metric: {
    name: [1, 'string'],
    description: [2, 'string'],
    unit: [3, 'string'],
    gauge: [5, 'Gauge'],
    sum: [7, 'Sum'],
    histogram: [9, 'Histogram'],
  },
  Gauge: { dataPoints: [1, 'NumberDataPoint', 'repeated'] },
  Sum: {
    dataPoints: [1, 'NumberDataPoint', 'repeated'],
    aggregationTemporality: [2, 'int32'],
    isMonotonic: [3, 'bool'],
  },
  Histogram: { dataPoints: [1, 'HistogramDataPoint', 'repeated'], aggregationTemporality: [2, 'int32'] },
  NumberDataPoint: {
    startTimeUnixNano: [2, 'fixed64'],
    timeUnixNano: [3, 'fixed64'],
    asDouble: [4, 'double'],
    asInt: [6, 'sfixed64'],
    attributes: [7, 'KeyValue', 'repeated'],
  },
  HistogramDataPoint: {
    startTimeUnixNano: [2, 'fixed64'],
    timeUnixNano: [3, 'fixed64'],
    count: [4, 'fixed64'],
    sum: [5, 'double'],
    bucketCounts: [6, 'fixed64', 'repeated'],
    explicitBounds: [7, 'double', 'repeated'],
    attributes: [9, 'KeyValue', 'repeated'],
  },
  // opentelemetry/proto/trace/v1/trace.proto
  ResourceSpans: { resource: [1, 'Resource'], scopeSpans: [2, 'ScopeSpans', 'repeated'] },
  ScopeSpans: { scope: [1, 'InstrumentationScope'], spans: [2, 'Span', 'repeated'] },
  Span: {
    traceId: [1, 'bytes'],
    spanId: [2, 'bytes'],
    parentSpanId: [4, 'bytes'],
    name: [5, 'string'],
    kind: [6, 'int32'],
    startTimeUnixNano: [7, 'fixed64'],
    endTimeUnixNano: [8, 'fixed64'],
    attributes: [9, 'KeyValue', 'repeated'],
  },
  // opentelemetry/proto/collector/{metrics,trace}/v1/*_service.proto
  ExportMetricsServiceRequest: { resourceMetrics: [1, 'ResourceMetrics', 'repeated'] },
  ExportTraceServiceRequest: { resourceSpans: [1, 'ResourceSpans', 'repeated'] },
};

let root: protobuf.Root | undefined;

function lookup(name: string): protobuf.Type {
  if (root === undefined) {
    const nested: Record<string, { fields: Record<string, { id: number; type: string; rule?: string }> }> = {};
    for (const [message, fields] of Object.entries(MESSAGES)) {
      nested[message] = {
        fields: Object.fromEntries(
          Object.entries(fields).map(([field, [id, type, rule]]) => [
            field,
            rule === undefined ? { id, type } : { id, type, rule },
          ]),
        ),
      };
    }
    root = protobuf.Root.fromJSON({ nested });
  }
  return root.lookupType(name);
}

/** An attribute value as the exporter sent it (arrays and maps nested). */
export type OtlpValue = string | number | boolean | Uint8Array | OtlpValue[] | { [key: string]: OtlpValue } | undefined;

interface RawKeyValue {
  key?: string;
  value?: RawAnyValue;
}
interface RawAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number;
  doubleValue?: number;
  arrayValue?: { values?: RawAnyValue[] };
  kvlistValue?: { values?: RawKeyValue[] };
  bytesValue?: Uint8Array;
}

function anyValue(value: RawAnyValue | undefined): OtlpValue {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return value.intValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(anyValue);
  if (value.kvlistValue !== undefined) return attributesOf(value.kvlistValue.values);
  return value.bytesValue;
}

function attributesOf(list: RawKeyValue[] | undefined): Record<string, OtlpValue> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key ?? '', anyValue(entry.value)]));
}

/** One data point: its attributes, and its value (number points) or count and sum (histograms). */
export interface OtlpPoint {
  readonly attributes: Record<string, OtlpValue>;
  readonly startTimeUnixNano: number;
  readonly timeUnixNano: number;
  /** Gauge and sum points. */
  readonly value?: number;
  /** Histogram points. */
  readonly count?: number;
  readonly sum?: number;
  readonly bucketCounts?: readonly number[];
  readonly explicitBounds?: readonly number[];
}

/** One metric of a request. */
export interface OtlpMetric {
  readonly name: string;
  readonly unit: string;
  readonly kind: 'gauge' | 'sum' | 'histogram' | 'other';
  /** 1 delta, 2 cumulative (sums and histograms). */
  readonly aggregationTemporality?: number;
  /** Sums only: a counter (true) or an up-down counter (false). */
  readonly monotonic?: boolean;
  readonly points: readonly OtlpPoint[];
}

/** One span of a request. */
export interface OtlpSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly attributes: Record<string, OtlpValue>;
}

/** One resource block: its attributes, its scopes, and what they carry. */
export interface OtlpResourceBlock<T> {
  readonly resource: Record<string, OtlpValue>;
  readonly scopes: readonly { readonly name: string; readonly version: string; readonly items: readonly T[] }[];
}

const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, defaults: false, arrays: true };

function hex(bytes: Uint8Array | undefined): string {
  return Buffer.from(bytes ?? []).toString('hex');
}

// biome-ignore lint/suspicious/noExplicitAny: the decoded message is walked field by field.
type Raw = any;

function pointOf(point: Raw): OtlpPoint {
  return {
    attributes: attributesOf(point.attributes),
    startTimeUnixNano: point.startTimeUnixNano ?? 0,
    timeUnixNano: point.timeUnixNano ?? 0,
    ...(point.asDouble !== undefined ? { value: point.asDouble } : {}),
    ...(point.asInt !== undefined ? { value: point.asInt } : {}),
    ...(point.count !== undefined ? { count: point.count } : {}),
    ...(point.sum !== undefined ? { sum: point.sum } : {}),
    ...(point.bucketCounts !== undefined ? { bucketCounts: point.bucketCounts } : {}),
    ...(point.explicitBounds !== undefined ? { explicitBounds: point.explicitBounds } : {}),
  };
}

function metricOf(metric: Raw): OtlpMetric {
  const data = metric.gauge ?? metric.sum ?? metric.histogram;
  const kind = metric.gauge ? 'gauge' : metric.sum ? 'sum' : metric.histogram ? 'histogram' : 'other';
  return {
    name: metric.name ?? '',
    unit: metric.unit ?? '',
    kind,
    ...(data?.aggregationTemporality !== undefined ? { aggregationTemporality: data.aggregationTemporality } : {}),
    ...(metric.sum ? { monotonic: metric.sum.isMonotonic === true } : {}),
    points: (data?.dataPoints ?? []).map(pointOf),
  };
}

/** Decodes the body of an OTLP/HTTP protobuf metrics export (`POST /v1/metrics`). */
export function decodeOtlpMetrics(body: Uint8Array): OtlpResourceBlock<OtlpMetric>[] {
  const type = lookup('ExportMetricsServiceRequest');
  const request: Raw = type.toObject(type.decode(body), TO_OBJECT);
  return (request.resourceMetrics ?? []).map((block: Raw) => ({
    resource: attributesOf(block.resource?.attributes),
    scopes: (block.scopeMetrics ?? []).map((scope: Raw) => ({
      name: scope.scope?.name ?? '',
      version: scope.scope?.version ?? '',
      items: (scope.metrics ?? []).map(metricOf),
    })),
  }));
}

/** Decodes the body of an OTLP/HTTP protobuf trace export (`POST /v1/traces`). */
export function decodeOtlpTraces(body: Uint8Array): OtlpResourceBlock<OtlpSpan>[] {
  const type = lookup('ExportTraceServiceRequest');
  const request: Raw = type.toObject(type.decode(body), TO_OBJECT);
  return (request.resourceSpans ?? []).map((block: Raw) => ({
    resource: attributesOf(block.resource?.attributes),
    scopes: (block.scopeSpans ?? []).map((scope: Raw) => ({
      name: scope.scope?.name ?? '',
      version: scope.scope?.version ?? '',
      items: (scope.spans ?? []).map(
        (span: Raw): OtlpSpan => ({
          name: span.name ?? '',
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          attributes: attributesOf(span.attributes),
        }),
      ),
    })),
  }));
}
