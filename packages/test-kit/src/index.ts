// @gym/test-kit: the repository's private test helpers (never published). Every helper runs on
// a real OpenTelemetry SDK; tests assert on what the SDK exports.

export { capture, type Deferred, deferred, type Settled, settle } from './deferred.js';
export { DeltaPullMetricReader } from './delta-reader.js';
export {
  captureDiag,
  DiagCapture,
  type DiagLevel,
  type DiagMessage,
  installThrowingDiagLogger,
  resetDiag,
  ThrowingDiagLogger,
} from './diag-capture.js';
export { collectedByGc, gc } from './gc.js';
export { ManualClock } from './manual-clock.js';
export {
  attributeSets,
  collectMetrics,
  counterValue,
  createMetricHarness,
  findMetric,
  gaugeValue,
  histogramCount,
  histogramPoint,
  histogramTotal,
  type MetricHarness,
  type MetricHarnessOptions,
  PullMetricReader,
  pointsOf,
  sameAttributes,
} from './metric-harness.js';
export {
  decodeOtlpMetrics,
  decodeOtlpTraces,
  type OtlpMetric,
  type OtlpPoint,
  type OtlpResourceBlock,
  type OtlpSpan,
  type OtlpValue,
} from './otlp.js';
export { copyBuiltPackage, linkDirectory, REPO_ROOT } from './package-copies.js';
export { createSpanHarness, type SpanHarness } from './span-harness.js';
export { findOnPath, type RequiredTools, requireTools, TOOLS_INSTALL_HINT } from './tools.js';
export { WAIT_FOR_TIMEOUT_MS, waitFor } from './wait-for.js';
