// NeMo Gym's rollout, verify and fleet instruments. `gym.server.request_duration_ms` is never
// written: undimensioned, it would merge every route. A bad value is dropped, never clamped (a
// clamped duration would lie on a dashboard).

import { INSTRUMENTS } from '@gym/constants';
import { getTelemetryState } from '@gym/core';
import {
  createInstrument,
  createReporter,
  describeValue,
  perMeter,
  resolveMeter,
  sharedSlot,
} from '@gym/core/internal';
import type { MeterProvider } from '@opentelemetry/api';

export const SCOPE = Object.freeze({ name: '@gym/metrics' });
export const reporter = createReporter(SCOPE.name);

/** Where a {@link GymMetrics} records. */
export interface MetricsOptions {
  /** Record on this provider's `@gym/metrics` meter. Absent or `null`: the global MeterProvider, only while metrics export. */
  readonly meterProvider?: MeterProvider | null | undefined;
}

const instrumentsOf = perMeter((meter) => ({
  rolloutDuration: createInstrument(meter, INSTRUMENTS.rolloutDuration),
  verifyDuration: createInstrument(meter, INSTRUMENTS.verifyDuration),
  verifySuccessRate: createInstrument(meter, INSTRUMENTS.verifySuccessRate),
  serversActive: createInstrument(meter, INSTRUMENTS.serversActive),
}));

// Process-wide state lives in @gym/core shared slots, so every copy of the package agrees. A
// slot's name carries its shape version; a shape is only ever extended.
export const VERIFY_TALLY_SLOT = '@gym/metrics/verify-tally@1';
export type VerifyTally = { calls: number; completed: number };
export const ORCHESTRATOR_SLOT = '@gym/metrics/orchestrator@1';
export type OrchestratorDeclaration = { declared: boolean | undefined };

// Cumulative (Gym's definition of the rate), and counted even while nothing exports.
const tally = sharedSlot<VerifyTally>(VERIFY_TALLY_SLOT, () => ({ calls: 0, completed: 0 }));
const declaration = sharedSlot<OrchestratorDeclaration>(ORCHESTRATOR_SLOT, () => ({ declared: undefined }));

/**
 * Declares whether this process is the fleet's orchestrator, the one writer of
 * `gym.servers.active` (a second writer would make the gauge flap between two truths). It wins
 * over the published telemetry state in both directions.
 *
 * @param isOrchestrator - `true` (the default) to declare, `false` to withdraw.
 */
export function declareOrchestrator(isOrchestrator = true): void {
  declaration.declared = isOrchestrator === true;
}

/** The explicit declaration if one was made, else `getTelemetryState()?.orchestrator`, else `false`. */
export function isOrchestrator(): boolean {
  return declaration.declared ?? getTelemetryState()?.orchestrator === true;
}

/**
 * Records the `gym.*` rollout, verify and fleet instruments. Nothing it does throws: a bad value
 * is dropped with one `diag` warning per kind of mistake, and a failing meter is reported once
 * and tried again on the next call.
 *
 * ```ts
 * const gym = new GymMetrics({ meterProvider });
 * gym.recordVerify(40, true);
 * ```
 */
export class GymMetrics {
  readonly #source: MetricsOptions | undefined;

  constructor(options?: MetricsOptions) {
    this.#source = options?.meterProvider != null ? { meterProvider: options.meterProvider } : undefined;
  }

  /** Records one rollout's wall time in milliseconds, a finite number >= 0, into `gym.rollout.duration_ms`. */
  recordRolloutDuration(ms: number): void {
    if (invalid('recordRolloutDuration', 'ms', ms)) return;
    try {
      const meter = resolveMeter(this.#source, SCOPE, reporter);
      if (meter !== undefined) instrumentsOf(meter).rolloutDuration.record(ms);
    } catch (error) {
      reportFailure(error);
    }
  }

  /**
   * Records one verify call: its duration into `gym.verify.duration_ms` and the success
   * fraction of every call so far in this process (counted even while metrics do not export)
   * into `gym.verify.success_rate`. An invalid `ms` drops only the duration point: a failure is
   * never hidden by a bad number.
   *
   * @param ms - The verify call's wall time in milliseconds, a finite number >= 0.
   * @param succeeded - Whether the verify call completed (not whether the task passed).
   */
  recordVerify(ms: number, succeeded: boolean): void {
    if (invalid('recordVerify', 'succeeded', succeeded)) return;
    const validMs = !invalid('recordVerify', 'ms', ms);
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
   * Sets `gym.servers.active` to the number of servers in the fleet: after the servers start,
   * and 0 before they shut down. Only the orchestrator ({@link declareOrchestrator}, or the
   * published telemetry state) writes it; elsewhere nothing is recorded and one diag warning
   * is written for the process.
   *
   * @param count - Servers in the fleet, an integer >= 0.
   */
  recordActiveServers(count: number): void {
    if (invalid('recordActiveServers', 'count', count)) return;
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

const DEFAULT = new GymMetrics();
/** {@link GymMetrics.recordRolloutDuration} on the global provider, while metrics export. */
export const recordRolloutDuration = (ms: number): void => DEFAULT.recordRolloutDuration(ms);
/** {@link GymMetrics.recordVerify} on the global provider (the tally counts even while metrics do not export). */
export const recordVerify = (ms: number, succeeded: boolean): void => DEFAULT.recordVerify(ms, succeeded);
/** {@link GymMetrics.recordActiveServers} on the global provider, while metrics export. */
export const recordActiveServers = (count: number): void => DEFAULT.recordActiveServers(count);

const ALLOWED = { ms: 'a finite number of milliseconds >= 0', count: 'an integer >= 0', succeeded: 'true or false' };

/** What is wrong with `value` as `field`, or `undefined` when nothing is. */
function mistakeOf(field: keyof typeof ALLOWED, value: unknown): string | undefined {
  if (field === 'succeeded') return typeof value === 'boolean' ? undefined : 'not a boolean';
  if (typeof value !== 'number') return 'not a number';
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return 'infinite';
  if (value < 0) return 'negative';
  return field === 'count' && !Number.isInteger(value) ? 'not an integer' : undefined;
}

/** Whether `value` is not a valid `field`; each kind of mistake is reported once per recorder and field. */
function invalid(recorder: string, field: keyof typeof ALLOWED, value: unknown): boolean {
  const mistake = mistakeOf(field, value);
  if (mistake === undefined) return false;
  const dropped =
    recorder === 'recordVerify' && field === 'ms'
      ? 'The duration point was dropped; the outcome still counts in the success rate'
      : 'The call was dropped (nothing recorded)';
  reporter.warnOnce(
    `${recorder}.${field}:${mistake}`,
    () =>
      `${recorder}: ${field} = ${describeValue(value)} is ${mistake}; allowed: ${ALLOWED[field]}. ` +
      `${dropped}; later ${mistake} values of ${field} are dropped silently.`,
  );
  return true;
}

function reportFailure(error: unknown): void {
  reporter.warnOnce('record', 'recording failed; the value was dropped (the next call tries again)', error);
}

const REFUSAL =
  `recordActiveServers refused: ${INSTRUMENTS.serversActive.name} has one writer, the orchestrator, and ` +
  'this process has not declared itself the orchestrator. Call declareOrchestrator() in the ' +
  "orchestrator process (or initialise @gym/otel-bootstrap with serverType 'orchestrator'); " +
  'servers must not write this gauge. Nothing was recorded; later calls here are refused silently.';
