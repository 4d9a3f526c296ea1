// The recorder. `GymMetrics` holds where to record (an injected provider, else the global
// provider while exporting); its four instruments come from the meter it resolves, made once
// per meter from their @gym/constants entries. The free functions delegate to one default
// instance. `gym.server.request_duration_ms` is not written on purpose: undimensioned, it
// would merge every route.
//
// Nothing here throws into the caller: a bad value is dropped (never clamped: a clamped
// duration would be a lie in a dashboard) and reported once per recorder, field and kind of
// mistake; a meter, provider or logger that throws is reported once and retried on the next
// call. One try/catch per recording method, at its edge.

import { INSTRUMENTS } from '@gym/constants';
import { createInstrument, describeValue, perMeter, resolveMeter, sharedSlot } from '@gym/core/internal';
import type { MeterProvider } from '@opentelemetry/api';
import { isOrchestrator } from './orchestrator.js';
import { reporter, SCOPE } from './scope.js';

/** Where a {@link GymMetrics} records. */
export interface MetricsOptions {
  /**
   * Record on this provider's `@gym/metrics` meter. Absent or `null`: the global MeterProvider,
   * and only while metrics are exporting.
   */
  readonly meterProvider?: MeterProvider | null | undefined;
}

const instrumentsOf = perMeter((meter) => ({
  rolloutDuration: createInstrument(meter, INSTRUMENTS.rolloutDuration),
  verifyDuration: createInstrument(meter, INSTRUMENTS.verifyDuration),
  verifySuccessRate: createInstrument(meter, INSTRUMENTS.verifySuccessRate),
  serversActive: createInstrument(meter, INSTRUMENTS.serversActive),
}));

/** Name of the shared slot of the verify tally; the shape below is only ever extended. */
export const VERIFY_TALLY_SLOT = '@gym/metrics/verify-tally@1';

/** Verify calls counted so far in this process. */
export interface VerifyTally {
  calls: number;
  completed: number;
}

// Process-wide and cumulative (Gym's definition of the rate; a window would need a clock on
// the hot path), counted even while nothing exports, and shared by every copy of the package.
const tally = sharedSlot<VerifyTally>(VERIFY_TALLY_SLOT, () => ({ calls: 0, completed: 0 }));

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
    if (!isDuration(ms)) {
      reportInvalid('recordRolloutDuration', 'ms', ms, 'duration', DROPPED_CALL);
      return;
    }
    try {
      const meter = resolveMeter(this.#source, SCOPE, reporter);
      if (meter !== undefined) instrumentsOf(meter).rolloutDuration.record(ms);
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
      reportInvalid('recordVerify', 'succeeded', succeeded, 'flag', DROPPED_CALL);
      return;
    }
    const validMs = isDuration(ms);
    if (!validMs) reportInvalid('recordVerify', 'ms', ms, 'duration', DROPPED_POINT);
    try {
      tally.calls += 1;
      if (succeeded) tally.completed += 1;
      const meter = resolveMeter(this.#source, SCOPE, reporter);
      if (meter === undefined) return;
      const instruments = instrumentsOf(meter);
      if (validMs) instruments.verifyDuration.record(ms);
      instruments.verifySuccessRate.record(tally.completed / tally.calls);
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
    if (!(Number.isInteger(count) && count >= 0)) {
      reportInvalid('recordActiveServers', 'count', count, 'count', DROPPED_CALL);
      return;
    }
    try {
      // Resolved first: the refusal speaks only when the write would have been exported.
      const meter = resolveMeter(this.#source, SCOPE, reporter);
      if (meter === undefined) return;
      if (isOrchestrator()) instrumentsOf(meter).serversActive.record(count);
      else reporter.warnOnce('recordActiveServers:not-orchestrator', REFUSAL);
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

const DROPPED_CALL = 'the call was dropped (nothing recorded)';
const DROPPED_POINT = 'the duration point was dropped; the outcome still counts in the success rate';
const ALLOWED = { duration: 'a finite number of milliseconds >= 0', count: 'an integer >= 0', flag: 'true or false' };

/** A finite number >= 0. NaN fails the comparison: one branch on the hot path. */
function isDuration(ms: unknown): ms is number {
  return typeof ms === 'number' && ms >= 0 && ms !== Number.POSITIVE_INFINITY;
}

function reportInvalid(
  recorder: string,
  field: string,
  value: unknown,
  kind: keyof typeof ALLOWED,
  dropped: string,
): void {
  let mistake = 'not an integer';
  if (kind === 'flag') mistake = 'not a boolean';
  else if (typeof value !== 'number') mistake = 'not a number';
  else if (Number.isNaN(value)) mistake = 'NaN';
  else if (!Number.isFinite(value)) mistake = 'infinite';
  else if (value < 0) mistake = 'negative';
  reporter.warnOnce(
    `${recorder}.${field}:${mistake}`,
    () =>
      `${recorder}: ${field} = ${describeValue(value)} is ${mistake}; allowed: ${ALLOWED[kind]}. ` +
      `${dropped[0]!.toUpperCase()}${dropped.slice(1)}; later ${mistake} values of ${field} are dropped silently.`,
  );
}

function reportFailure(error: unknown): void {
  reporter.warnOnce(
    'record',
    'recording failed; the value was dropped and the caller carried on (the next call tries again)',
    error,
  );
}

const REFUSAL =
  `recordActiveServers refused: ${INSTRUMENTS.serversActive.name} has one writer, the orchestrator, and ` +
  'this process has not declared itself the orchestrator. Call declareOrchestrator() in the ' +
  "orchestrator process (or initialise @gym/otel-bootstrap with serverType 'orchestrator'); " +
  'servers must not write this gauge. Nothing was recorded; later calls here are refused silently.';
