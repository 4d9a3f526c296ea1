// Who may write `gym.servers.active`: one process per fleet, the orchestrator. A second
// writer would make the gauge flap between two truths, so every other process is refused.
// The answer is an explicit declaration if one was made, else the published telemetry state
// (which @gym/otel-bootstrap writes for serverType 'orchestrator'); this package reads the
// state through @gym/constants and never imports the bootstrap.

import { getTelemetryState } from '@gym/core';

let declared: boolean | undefined;

/**
 * Declares whether this process is the fleet's orchestrator, the one writer of
 * `gym.servers.active`. An explicit declaration wins over the published telemetry state, in
 * both directions (`declareOrchestrator(false)` refuses even if the state says orchestrator).
 *
 * @param isOrchestrator - `true` (the default) to declare, `false` to withdraw.
 */
export function declareOrchestrator(isOrchestrator = true): void {
  declared = isOrchestrator === true;
}

/**
 * Whether this process is the orchestrator: the explicit declaration if one was made, else
 * `getTelemetryState()?.orchestrator`, else `false`.
 */
export function isOrchestrator(): boolean {
  if (declared !== undefined) return declared;
  return getTelemetryState()?.orchestrator === true;
}
