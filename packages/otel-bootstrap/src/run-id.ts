// One run id for the whole fleet: every process of a run must carry the same `nemo.run.id`,
// or a dashboard cannot put a run's servers together. The orchestrator fixes it once
// (configureTelemetryEnv) and hands it down through the environment.

import { GYM_VARIABLES } from '@gym/core/internal';
import type { Environment } from './config.js';

/** Slurm's job id: the natural run id of a batch job. */
export const ENV_SLURM_JOB_ID = 'SLURM_JOB_ID' as const;

/** 12 random hex characters (48 bits): unique enough for runs, short enough to read. */
export function mintRunId(): string {
  // Web Crypto's global (no import): node:crypto would cost every process its load time.
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(6))).toString('hex');
}

/**
 * The run id in force: the configured one (`NEMO_GYM_OTEL_RUN_ID`), else a `SLURM_JOB_ID`
 * that is a usable run id by the same grammar, else a freshly minted one.
 */
export function resolveRunId(configured: string | undefined, env: Environment): string {
  if (configured !== undefined) return configured;
  const slurm = env[ENV_SLURM_JOB_ID];
  const usable = slurm === undefined ? undefined : GYM_VARIABLES.runId.parse(slurm);
  return usable ?? mintRunId();
}
