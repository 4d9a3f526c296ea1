// The names one generation uses: the Prometheus names of every series in each naming the rules
// read (the OpenTelemetry JS exporter's, an OpenTelemetry Collector's with unit suffixes, and
// any the caller adds), and the name of every recorded series. Recorded names follow
// Prometheus' `level:metric:operations` convention and are built from the un-suffixed name, so
// both kinds of server land in ONE recorded series and one dashboard reads them all.

import { INSTRUMENTS } from '@gym/constants';
import { COLLECTOR_UNIT_SUFFIXES, type PrometheusSeriesNames, prometheusNames } from './prometheus-names.js';
import type { SeriesId } from './series.js';
import type { UnitSuffix } from './types.js';

/** The rate window of every recording rule. */
export const RATE_WINDOW = '5m' as const;

/** Series names for every pipeline the rules read. */
export interface Naming {
  /** Prometheus names of a series in each naming read, the JS exporter's (un-suffixed) first, each once. */
  readonly variants: (id: SeriesId) => readonly PrometheusSeriesNames[];
}

/**
 * Names for a fleet of JS servers scraped directly (no unit suffix) beside servers behind an
 * OpenTelemetry Collector (its unit suffixes), plus a pipeline adding `suffixes`.
 */
export function naming(suffixes: readonly UnitSuffix[] = []): Naming {
  const pipelines: readonly (readonly UnitSuffix[])[] = [[], COLLECTOR_UNIT_SUFFIXES, suffixes];
  return {
    variants: (id) => {
      const seen = new Set<string>();
      return pipelines
        .map((pipeline) => prometheusNames(INSTRUMENTS[id], pipeline))
        .filter((names) => !seen.has(names.base) && seen.add(names.base) !== undefined);
    },
  };
}

/**
 * `wrap(name)` for each naming of one series, joined with `or`: the series of either kind of
 * server (their names differ, so no label set is dropped). `part` picks `series`, `bucket`,
 * `sum` or `count`.
 */
export function eitherNaming(
  names: Naming,
  id: SeriesId,
  part: keyof PrometheusSeriesNames,
  wrap: (name: string) => string = (name) => name,
): string {
  const each = names.variants(id).map((variant) => wrap(variant[part]));
  return each.length === 1 ? (each[0] as string) : `(${each.join(' or ')})`;
}

/** Recorded series names (independent of unit suffixes). */
export function recordedNames(names: Naming) {
  const plain = (id: SeriesId): string => (names.variants(id)[0] as PrometheusSeriesNames).base;
  return {
    targetUp: 'instance:gym_target:up',
    gymSeriesCount: 'instance:gym_series:count',
    gymSeriesInstances: 'job:gym_series:instances',
    gymSeriesInstancesMin: 'job:gym_series:instances_min10m',
    targetInfoInstances: 'job:target_info:instances',
    targetInfoInstancesMin: 'job:target_info:instances_min10m',
    operationQueueBucketRate: `instance:${plain('operationQueueDuration')}_bucket:rate${RATE_WINDOW}`,
    operationQueueCountRate: `instance:${plain('operationQueueDuration')}_count:rate${RATE_WINDOW}`,
    operationRunBucketRate: `instance:${plain('operationDuration')}_bucket:rate${RATE_WINDOW}`,
    operationRunCountRate: `instance:${plain('operationDuration')}_count:rate${RATE_WINDOW}`,
    operationFailureRatio: `job:${plain('operationDuration')}:failure_ratio_rate${RATE_WINDOW}`,
    rolloutBucketRate: `instance:${plain('rolloutDuration')}_bucket:rate${RATE_WINDOW}`,
    verifyBucketRate: `instance:${plain('verifyDuration')}_bucket:rate${RATE_WINDOW}`,
    verifyCountRate: `instance:${plain('verifyDuration')}_count:rate${RATE_WINDOW}`,
    verifyCalls: `instance:${plain('verifyDuration')}_count:sum`,
    verifyCompleted: `instance:${plain('verifySuccessRate')}:completed_calls`,
    verifySuccessRatio: `instance:${plain('verifySuccessRate')}:ratio_rate${RATE_WINDOW}`,
    concurrencySaturation: `instance:${plain('concurrencyActive')}:saturation_ratio`,
    concurrencySaturationAvg: `instance:${plain('concurrencyActive')}:saturation_ratio_avg${RATE_WINDOW}`,
    concurrencyQueueMax: `instance:${plain('concurrencyQueueDepth')}:max${RATE_WINDOW}`,
    oldestWait: `instance:${plain('concurrencyOldestWait')}:max`,
    oldestWaitMin: `instance:${plain('concurrencyOldestWait')}:min${RATE_WINDOW}`,
    oldestWaitDrops: `instance:${plain('concurrencyOldestWait')}:drops${RATE_WINDOW}`,
    queueDepthDrops: `instance:${plain('concurrencyQueueDepth')}:drops${RATE_WINDOW}`,
    admissionTimeoutsRate: `instance:${plain('admissionTimeouts')}:rate${RATE_WINDOW}`,
    admissionCancelledRate: `instance:${plain('admissionCancelled')}:rate${RATE_WINDOW}`,
    admissionRejectedRate: `instance:${plain('admissionRejected')}:rate${RATE_WINDOW}`,
    admissionRefusedRate: `instance:gym_concurrency_admission_refused:rate${RATE_WINDOW}`,
    admissionRefusedRatio: `instance:gym_concurrency_admission_refused:ratio_rate${RATE_WINDOW}`,
    eventLoopLagBucketRate: `instance:${plain('eventLoopLag')}_bucket:rate${RATE_WINDOW}`,
    eventLoopLagP99: `instance:${plain('eventLoopLag')}:p99_rate${RATE_WINDOW}`,
    cpuRate: `instance:${plain('processCpuTime')}:rate${RATE_WINDOW}`,
    gcTimeRate: `instance:${plain('gcDuration')}_sum:rate${RATE_WINDOW}`,
    sandboxStartupBucketRate: `instance:${plain('sandboxStartupDuration')}_bucket:rate${RATE_WINDOW}`,
    sandboxExecBucketRate: `instance:${plain('sandboxExecDuration')}_bucket:rate${RATE_WINDOW}`,
    sandboxCreateRetryRate: `instance:${plain('sandboxCreateRetry')}:rate${RATE_WINDOW}`,
    startupStageDuration: `instance:${plain('serverStartupStageDuration')}:mean`,
    poolQueueBucketRate: `instance:${plain('httpPoolQueueDuration')}_bucket:rate${RATE_WINDOW}`,
    poolQueueCountRate: `instance:${plain('httpPoolQueueDuration')}_count:rate${RATE_WINDOW}`,
    poolQueueP50: `instance:${plain('httpPoolQueueDuration')}:p50_rate${RATE_WINDOW}`,
    poolConnectRate: `instance:${plain('httpPoolConnectTotal')}:rate${RATE_WINDOW}`,
    poolQueuedRatio: `instance:${plain('httpPoolConnectTotal')}:queued_ratio_rate${RATE_WINDOW}`,
  } as const;
}

/** The recorded names of one generation. */
export type RecordedNames = ReturnType<typeof recordedNames>;
