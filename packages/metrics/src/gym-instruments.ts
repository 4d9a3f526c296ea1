// The four instruments this package writes, made once per Meter (in the constructor) and
// cached per Meter in a WeakMap: a process that re-initialises telemetry (a new provider, so
// a new meter) gets fresh instruments, and a dropped meter takes its instruments with it.
// An instrument with no recorded point exports nothing, so declaring `gym.servers.active` in a
// process that never writes it is invisible. `gym.server.request_duration_ms` is not here on
// purpose: undimensioned, it would merge every route.

import {
  GYM_DURATION_BOUNDARIES_MS,
  METRIC_ROLLOUT_DURATION,
  METRIC_SERVERS_ACTIVE,
  METRIC_VERIFY_DURATION,
  METRIC_VERIFY_SUCCESS_RATE,
} from '@gym/constants';
import { perMeter } from '@gym/core';
import type { Gauge, Histogram, Meter } from '@opentelemetry/api';

/** Unit of the two duration histograms. Gym keeps milliseconds (and `_ms` names) for its dashboards. */
const UNIT_MS = 'ms';
/** UCUM's dimensionless unit: the success rate is a fraction in [0, 1]. */
const UNIT_FRACTION = '1';
// `gym.servers.active` gets no unit: an instrument's identity is (name, kind, unit), and a
// unit Gym's Python servers do not set would split the series.

/** The instruments of one meter. */
export class GymInstruments {
  readonly rolloutDuration: Histogram;
  readonly verifyDuration: Histogram;
  readonly verifySuccessRate: Gauge;
  readonly serversActive: Gauge;

  constructor(meter: Meter) {
    // A copy: the API types the advice as a mutable array, the constant is frozen `as const`.
    const advice = { explicitBucketBoundaries: [...GYM_DURATION_BOUNDARIES_MS] };
    this.rolloutDuration = meter.createHistogram(METRIC_ROLLOUT_DURATION, {
      description: 'One rollout, end to end.',
      unit: UNIT_MS,
      advice,
    });
    this.verifyDuration = meter.createHistogram(METRIC_VERIFY_DURATION, {
      description: 'One verify call.',
      unit: UNIT_MS,
      advice,
    });
    this.verifySuccessRate = meter.createGauge(METRIC_VERIFY_SUCCESS_RATE, {
      description: 'Fraction of verify calls that completed, cumulative since this process started.',
      unit: UNIT_FRACTION,
    });
    this.serversActive = meter.createGauge(METRIC_SERVERS_ACTIVE, {
      description: 'Servers in the fleet, as the orchestrator last set it.',
    });
  }
}

/**
 * The instruments of `meter`, made on first use. Throws when the meter does (nothing is
 * cached then, so the next call tries again); callers catch and report.
 */
export const instrumentsOf: (meter: Meter) => GymInstruments = perMeter((meter) => new GymInstruments(meter));
