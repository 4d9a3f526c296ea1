// A real SDK trace pipeline: TracerProvider → SimpleSpanProcessor → InMemorySpanExporter.
// Tests read the spans the SDK finished, never what a mock was called with.

import { type Context, ROOT_CONTEXT, type Span, type Tracer, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

export interface SpanHarness {
  readonly tracerProvider: TracerProvider;
  readonly exporter: InMemorySpanExporter;
  /** A tracer of the provider (scope `test`). */
  readonly tracer: Tracer;
  /** Finished spans, in the order they ended; only those called `name` when given. */
  spans(name?: string): ReadableSpan[];
  /** A started parent span and a context holding it, for parenting assertions. */
  parent(name?: string): { span: Span; context: Context };
  /** Forgets the finished spans. */
  reset(): void;
  shutdown(): Promise<void>;
}

export function createSpanHarness(): SpanHarness {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const tracer = tracerProvider.getTracer('test');
  return {
    tracerProvider,
    exporter,
    tracer,
    spans: (name) => exporter.getFinishedSpans().filter((span) => name === undefined || span.name === name),
    parent: (name = 'parent') => {
      const span = tracer.startSpan(name);
      return { span, context: trace.setSpan(ROOT_CONTEXT, span) };
    },
    reset: () => exporter.reset(),
    shutdown: () => tracerProvider.shutdown(),
  };
}
