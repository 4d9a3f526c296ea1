// Run by test/otel3-compat.test.ts inside an outside project where the user installed the
// gym-telemetry tarballs next to their own OpenTelemetry 3.x SDK (@opentelemetry/api 1.10,
// sdk-metrics 3.x, sdk-trace 3.x), under Node 24. It records through each library with the
// user's providers injected and prints what the SDK exported, as one JSON line; the test
// asserts on it. It exits non-zero on any error. (3.x names: TracerProvider, not
// BasicTracerProvider; SimpleSpanProcessor takes { exporter }.)

import { readFileSync } from 'node:fs';
import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OPERATION_OUTCOME,
  INSTRUMENTS,
  SPAN_SANDBOX_REQUEST,
} from '@gym/constants';
import { GymMetrics } from '@gym/metrics';
import { resourcesOperation } from '@gym/operations';
import { recordRequest } from '@gym/sandbox-telemetry';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

const version = (name) =>
  JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, `file://${process.cwd()}/`), 'utf8')).version;

class PullReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  async onShutdown() {}
  async onForceFlush() {}
}

const reader = new PullReader();
const meterProvider = new MeterProvider({ readers: [reader] });
const spans = new InMemorySpanExporter();
const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });

// @gym/operations: an unlimited operation, one behind an acquire()/release limit, one failing.
const answer = await resourcesOperation(
  null,
  { operation: 'verify', executor: 'inline', meterProvider },
  async () => 42,
);
const limit = { acquire: async () => () => {} };
const tool = await resourcesOperation(limit, { operation: 'tool', executor: 'subprocess', meterProvider }, () => 'ran');
const failure = new Error('tool failed');
let rethrown;
try {
  await resourcesOperation(limit, { operation: 'tool', executor: 'subprocess', meterProvider }, async () => {
    throw failure;
  });
} catch (error) {
  rethrown = error;
}

// @gym/metrics.
const gym = new GymMetrics({ meterProvider });
gym.recordRolloutDuration(120);
gym.recordVerify(30, true);
gym.recordVerify(50, false);

// @gym/sandbox-telemetry.
const carried = recordRequest(
  { resources: { cpu: 2, memoryMib: 512 } },
  { 'nemo.gym.sandbox.provider': 'local' },
  { tracerProvider },
);

// @gym/observer, when the test installed it.
const observerModule = await import('@gym/observer').catch(() => null);
const observer = observerModule?.startObserver({ meterProvider, serverName: 'probe' });

const { resourceMetrics, errors } = await reader.collect();
observer?.stop();
if (errors.length > 0) throw new AggregateError(errors, 'collection failed');
const metrics = {};
for (const scope of resourceMetrics.scopeMetrics) {
  for (const metric of scope.metrics) {
    metrics[metric.descriptor.name] = {
      scope: scope.scope.name,
      unit: metric.descriptor.unit,
      points: metric.dataPoints.map((point) => ({
        attributes: point.attributes,
        value: typeof point.value === 'number' ? point.value : { count: point.value.count, sum: point.value.sum },
      })),
    };
  }
}

const pick = (name, attributes) =>
  metrics[name]?.points.find((point) =>
    Object.entries(attributes).every(([key, value]) => point.attributes[key] === value),
  )?.value;
// A histogram's count and sum over all its points: what was recorded, however attributes split it.
const total = (name) =>
  metrics[name]?.points.reduce((t, { value }) => ({ count: t.count + value.count, sum: t.sum + value.sum }), {
    count: 0,
    sum: 0,
  });

process.stdout.write(
  `${JSON.stringify({
    node: process.version,
    versions: {
      api: version('@opentelemetry/api'),
      sdkMetrics: version('@opentelemetry/sdk-metrics'),
      sdkTrace: version('@opentelemetry/sdk-trace'),
    },
    operations: {
      answer,
      tool,
      rethrownSameError: rethrown === failure,
      verifyOk: pick(INSTRUMENTS.operationDuration.name, {
        [ATTR_OPERATION]: 'verify',
        [ATTR_EXECUTOR]: 'inline',
        [ATTR_OPERATION_OUTCOME]: 'ok',
      }),
      toolOk: pick(INSTRUMENTS.operationDuration.name, {
        [ATTR_OPERATION]: 'tool',
        [ATTR_EXECUTOR]: 'subprocess',
        [ATTR_OPERATION_OUTCOME]: 'ok',
      }),
      toolError: pick(INSTRUMENTS.operationDuration.name, {
        [ATTR_OPERATION]: 'tool',
        [ATTR_EXECUTOR]: 'subprocess',
        [ATTR_OPERATION_OUTCOME]: 'error',
      }),
      queued: pick(INSTRUMENTS.operationQueueDuration.name, {
        [ATTR_OPERATION]: 'tool',
        [ATTR_EXECUTOR]: 'subprocess',
      }),
    },
    metrics: {
      rollout: total(INSTRUMENTS.rolloutDuration.name),
      verify: total(INSTRUMENTS.verifyDuration.name),
      successRate: pick(INSTRUMENTS.verifySuccessRate.name, {}),
    },
    sandbox: {
      carriedProvider: carried['nemo.gym.sandbox.provider'],
      spans: spans.getFinishedSpans().map((span) => ({ name: span.name, attributes: span.attributes })),
      expectedName: SPAN_SANDBOX_REQUEST,
    },
    observer: observerModule === null ? null : { inFlight: pick('gym.server.requests.in_flight', {}) },
    metricNames: Object.keys(metrics).sort(),
  })}\n`,
);
await meterProvider.shutdown();
await tracerProvider.shutdown();
