// The names one generation uses: the Prometheus name of every series (through
// prometheusNames, with the pipeline's unit suffixes) and the name of every recorded series.
// Recorded names follow Prometheus' `level:metric:operations` convention and do NOT change
// with a unit suffix, so a dashboard built for one pipeline reads the same recorded series.

import { type PrometheusSeriesNames, prometheusNames } from './prometheus-names.js';
import { SERIES, type SeriesId } from './series.js';
import type { UnitSuffix } from './types.js';

/** The rate window of every recording rule. */
export const RATE_WINDOW = '5m' as const;

/** Series names for one pipeline. */
export interface Naming {
  /** Prometheus names of a series as the pipeline writes them. */
  readonly series: (id: SeriesId) => PrometheusSeriesNames;
  /** The un-suffixed base name, which recorded names are built from. */
  readonly plain: (id: SeriesId) => string;
}

/** Names for a pipeline that adds these unit suffixes (none: the OpenTelemetry JS Prometheus exporter). */
export function naming(suffixes: readonly UnitSuffix[] = []): Naming {
  return {
    series: (id) => prometheusNames(SERIES[id], suffixes),
    plain: (id) => prometheusNames(SERIES[id]).base,
  };
}

/** Recorded series names (independent of unit suffixes). */
export function recordedNames(names: Naming) {
  const plain = names.plain;
  return {
    operationQueueBucketRate: `instance:${plain('operationQueueDuration')}_bucket:rate${RATE_WINDOW}`,
    operationRunBucketRate: `instance:${plain('operationDuration')}_bucket:rate${RATE_WINDOW}`,
    operationRunCountRate: `instance:${plain('operationDuration')}_count:rate${RATE_WINDOW}`,
    operationFailureRatio: `job:${plain('operationDuration')}:failure_ratio_rate${RATE_WINDOW}`,
    rolloutBucketRate: `instance:${plain('rolloutDuration')}_bucket:rate${RATE_WINDOW}`,
    verifyBucketRate: `instance:${plain('verifyDuration')}_bucket:rate${RATE_WINDOW}`,
    verifyCountRate: `instance:${plain('verifyDuration')}_count:rate${RATE_WINDOW}`,
    concurrencySaturation: `instance:${plain('concurrencyActive')}:saturation_ratio`,
    admissionTimeoutsRate: `instance:${plain('admissionTimeouts')}:rate${RATE_WINDOW}`,
    admissionCancelledRate: `instance:${plain('admissionCancelled')}:rate${RATE_WINDOW}`,
    admissionRejectedRate: `instance:${plain('admissionRejected')}:rate${RATE_WINDOW}`,
    eventLoopLagBucketRate: `instance:${plain('eventLoopLag')}_bucket:rate${RATE_WINDOW}`,
    eventLoopLagP99: `instance:${plain('eventLoopLag')}:p99_rate${RATE_WINDOW}`,
    cpuRate: `instance:${plain('processCpuTime')}:rate${RATE_WINDOW}`,
    gcTimeRate: `instance:${plain('gcDuration')}_sum:rate${RATE_WINDOW}`,
    sandboxStartupBucketRate: `instance:${plain('sandboxStartupDuration')}_bucket:rate${RATE_WINDOW}`,
    sandboxExecBucketRate: `instance:${plain('sandboxExecDuration')}_bucket:rate${RATE_WINDOW}`,
    sandboxCreateRetryRate: `instance:${plain('sandboxCreateRetry')}:rate${RATE_WINDOW}`,
  } as const;
}

/** The recorded names of one generation. */
export type RecordedNames = ReturnType<typeof recordedNames>;
