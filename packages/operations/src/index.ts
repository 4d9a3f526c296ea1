export { AdmissionRejectedError, AdmissionTimeoutError } from './admission-errors.js';
export { meteredLimit } from './metered-limit.js';
export { resourcesOperation } from './resources-operation.js';
export type * from './types.js';
