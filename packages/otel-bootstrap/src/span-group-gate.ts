// The span-group gate sits in front of every optional span, so it must cost next to
// nothing: one read of the published state and one set lookup. Before telemetry is set up,
// and whenever traces are not exported, every gate is shut.

import type { SpanGroup } from '@gym/constants';
import { getTelemetryState } from '@gym/core';

/**
 * True when spans of `group` should be made in this process: the published telemetry state
 * (written by `initTelemetry`, or by hand) lists the group. False when nothing was
 * published yet.
 */
export function isSpanGroupEnabled(group: SpanGroup): boolean {
  const state = getTelemetryState();
  return state?.tracesExporting === true && state.spanGroups.has(group);
}
