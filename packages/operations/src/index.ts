export { AdmissionRejectedError, AdmissionTimeoutError } from './admission-errors.js';
export { meteredLimit } from './metered-limit.js';
export { resourcesOperation } from './resources-operation.js';
export type {
  AcquireReleaseLimit,
  Component,
  Executor,
  MeterableLimit,
  MeteredLimit,
  MeteredLimitOptions,
  MeteredLimitState,
  MeteredRunOptions,
  MutexLike,
  Operation,
  OperationContext,
  OperationLimit,
  Outcome,
  PLimitLike,
  ResourcesOperationOptions,
  SemaphoreLike,
} from './types.js';
