// Who may write `gym.servers.active`: one process per fleet, the orchestrator. A second
// writer would make the gauge flap between two truths, so every other process is refused.
// The answer is an explicit declaration if one was made, else the published telemetry state
// (which @gym/otel-bootstrap writes for serverType 'orchestrator'). The declaration lives in a
// @gym/core shared slot, so it holds for every copy of this package in the process.

import { getTelemetryState } from '@gym/core';
import { sharedSlot } from '@gym/core/internal';

/** Name of the shared slot holding the explicit declaration. */
export const ORCHESTRATOR_SLOT = '@gym/metrics/orchestrator@1';

/** The explicit declaration, if one was made. */
export interface OrchestratorDeclaration {
  declared: boolean | undefined;
}

const declaration = sharedSlot<OrchestratorDeclaration>(ORCHESTRATOR_SLOT, () => ({ declared: undefined }));

/**
 * Declares whether this process is the fleet's orchestrator, the one writer of
 * `gym.servers.active`. An explicit declaration wins over the published telemetry state, in
 * both directions (`declareOrchestrator(false)` refuses even if the state says orchestrator).
 *
 * @param isOrchestrator - `true` (the default) to declare, `false` to withdraw.
 */
export function declareOrchestrator(isOrchestrator = true): void {
  declaration.declared = isOrchestrator === true;
}

/**
 * Whether this process is the orchestrator: the explicit declaration if one was made, else
 * `getTelemetryState()?.orchestrator`, else `false`.
 */
export function isOrchestrator(): boolean {
  const declared = declaration.declared;
  if (declared !== undefined) return declared;
  return getTelemetryState()?.orchestrator === true;
}
