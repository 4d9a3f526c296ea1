// The recorder. `GymMetrics` holds where to record (an injected provider, else the global
// provider while exporting); its instruments come from the meter it resolves, made once per
// meter (gym-instruments.ts). The free functions delegate to one default instance: the global
// provider.
//
// Nothing here throws into the caller: a bad value is dropped and reported once, and a meter,
// provider or logger that throws is reported once (the logger's own failure is swallowed by
// @gym/core) and retried on the next call. One try/catch per recording method, at its edge.

import { METRIC_SERVERS_ACTIVE } from '@gym/constants';
import { resolveMeter } from '@gym/core/internal';
import { instrumentsOf } from './gym-instruments.js';
import { isOrchestrator } from './orchestrator.js';
import { reporter, SCOPE } from './scope.js';
import type { MetricsOptions } from './types.js';
import {
  isValidCount,
  isValidDuration,
  reportInvalidCount,
  reportInvalidDuration,
  reportInvalidFlag,
} from './validate.js';
import { tallyVerify } from './verify-tally.js';

const DROPPED_CALL = 'the call was dropped (nothing recorded)';
const DROPPED_POINT = 'the duration point was dropped; the outcome still counts in the success rate';

/**
 * Records the `gym.*` rollout, verify and fleet instruments. Nothing it does throws into the
 * caller: a bad value is dropped and reported once through `diag`, and a failing meter or
 * provider is reported once and tried again on the next call.
 *
 * ```ts
 * const gym = new GymMetrics({ meterProvider });
 * gym.recordVerify(40, true);
 * ```
 */
export class GymMetrics {
  readonly #source: MetricsOptions | undefined;

  /**
   * @param options - `meterProvider`: record on its `@gym/metrics` meter. Absent (or `null`):
   *   the global MeterProvider, only while metrics are exporting.
   */
  constructor(options?: MetricsOptions) {
    this.#source = options?.meterProvider != null ? { meterProvider: options.meterProvider } : undefined;
  }

  /**
   * Records one rollout's duration into `gym.rollout.duration_ms`. A negative, NaN, infinite or
   * non-number `ms` is dropped with one diag warning per kind of mistake.
   *
   * @param ms - The rollout's wall time in milliseconds, a finite number >= 0.
   */
  recordRolloutDuration(ms: number): void {
    if (!isValidDuration(ms)) {
      reportInvalidDuration('recordRolloutDuration', 'ms', ms, DROPPED_CALL);
      return;
    }
    try {
      const meter = resolveMeter(this.#source, SCOPE, reporter);
      if (meter === undefined) return;
      instrumentsOf(meter).rolloutDuration.record(ms);
    } catch (error) {
      reportFailure(error);
    }
  }

  /**
   * Records one verify call: its duration into `gym.verify.duration_ms` and the cumulative
   * success fraction of this process into `gym.verify.success_rate`.
   *
   * The tally behind the fraction counts every call with a boolean `succeeded`, even while
   * metrics are not exporting, and is shared by every recorder and every copy of this package
   * in the process. An invalid `ms` drops only the duration point (one diag warning per kind
   * of mistake): the outcome still counts, so a failure is never hidden by a bad number. A
   * non-boolean `succeeded` drops the whole call.
   *
   * @param ms - The verify call's wall time in milliseconds, a finite number >= 0.
   * @param succeeded - Whether the verify call completed (not whether the task passed).
   */
  recordVerify(ms: number, succeeded: boolean): void {
    if (typeof succeeded !== 'boolean') {
      reportInvalidFlag('recordVerify', 'succeeded', succeeded);
      return;
    }
    const validMs = isValidDuration(ms);
    if (!validMs) reportInvalidDuration('recordVerify', 'ms', ms, DROPPED_POINT);
    try {
      const rate = tallyVerify(succeeded);
      const meter = resolveMeter(this.#source, SCOPE, reporter);
      if (meter === undefined) return;
      const instruments = instrumentsOf(meter);
      if (validMs) instruments.verifyDuration.record(ms);
      instruments.verifySuccessRate.record(rate);
    } catch (error) {
      reportFailure(error);
    }
  }

  /**
   * Sets `gym.servers.active` to the number of servers in the fleet. Only the orchestrator
   * writes it: after the servers start, and 0 before they shut down. In a process that has not
   * declared itself the orchestrator (`declareOrchestrator()`, or the published telemetry
   * state) it is refused: nothing is recorded and one diag warning is written for the process.
   * A negative, non-integer, NaN or infinite `count` is dropped with one warning per kind of
   * mistake.
   *
   * @param count - Servers in the fleet, an integer >= 0.
   */
  recordActiveServers(count: number): void {
    if (!isValidCount(count)) {
      reportInvalidCount('recordActiveServers', 'count', count);
      return;
    }
    try {
      // Resolved first: the refusal speaks only when the write would have been exported.
      const meter = resolveMeter(this.#source, SCOPE, reporter);
      if (meter === undefined) return;
      if (!isOrchestrator()) {
        reporter.warnOnce('recordActiveServers:not-orchestrator', refusal);
        return;
      }
      instrumentsOf(meter).serversActive.record(count);
    } catch (error) {
      reportFailure(error);
    }
  }
}

/** The recorder of the free functions: the global provider, while metrics are exporting. */
const DEFAULT = new GymMetrics();

/** {@link GymMetrics.recordRolloutDuration} on the global provider (a no-op unless metrics are exporting). */
export function recordRolloutDuration(ms: number): void {
  DEFAULT.recordRolloutDuration(ms);
}

/** {@link GymMetrics.recordVerify} on the global provider (only the tally counts unless metrics are exporting). */
export function recordVerify(ms: number, succeeded: boolean): void {
  DEFAULT.recordVerify(ms, succeeded);
}

/** {@link GymMetrics.recordActiveServers} on the global provider (a no-op unless metrics are exporting). */
export function recordActiveServers(count: number): void {
  DEFAULT.recordActiveServers(count);
}

function reportFailure(error: unknown): void {
  reporter.warnOnce(
    'record',
    'recording failed; the value was dropped and the caller carried on (the next call tries again)',
    error,
  );
}

function refusal(): string {
  return (
    `recordActiveServers refused: ${METRIC_SERVERS_ACTIVE} has one writer, the orchestrator, and ` +
    'this process has not declared itself the orchestrator. Call declareOrchestrator() in the ' +
    "orchestrator process (or initialise @gym/otel-bootstrap with serverType 'orchestrator'); " +
    'servers must not write this gauge. Nothing was recorded; later calls here are refused silently.'
  );
}
