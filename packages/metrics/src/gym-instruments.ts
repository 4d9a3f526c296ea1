// The four instruments this package writes, made once per Meter from their entries in
// @gym/constants' INSTRUMENTS table and cached per Meter in a WeakMap: a process that
// re-initialises telemetry (a new provider, so a new meter) gets fresh instruments, and a
// dropped meter takes its instruments with it. An instrument with no recorded point exports
// nothing, so declaring `gym.servers.active` in a process that never writes it is invisible.
// `gym.server.request_duration_ms` is not here on purpose: undimensioned, it would merge every
// route.

import { INSTRUMENTS } from '@gym/constants';
import { createInstrument, perMeter } from '@gym/core/internal';
import type { Gauge, Histogram, Meter } from '@opentelemetry/api';

/** The instruments of one meter. */
export class GymInstruments {
  readonly rolloutDuration: Histogram;
  readonly verifyDuration: Histogram;
  readonly verifySuccessRate: Gauge;
  readonly serversActive: Gauge;

  constructor(meter: Meter) {
    this.rolloutDuration = createInstrument(meter, INSTRUMENTS.rolloutDuration);
    this.verifyDuration = createInstrument(meter, INSTRUMENTS.verifyDuration);
    this.verifySuccessRate = createInstrument(meter, INSTRUMENTS.verifySuccessRate);
    this.serversActive = createInstrument(meter, INSTRUMENTS.serversActive);
  }
}

/**
 * The instruments of `meter`, made on first use. Throws when the meter does (nothing is
 * cached then, so the next call tries again); callers catch and report.
 */
export const instrumentsOf: (meter: Meter) => GymInstruments = perMeter((meter) => new GymInstruments(meter));
