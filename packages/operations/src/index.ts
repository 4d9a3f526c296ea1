export { AdmissionRejectedError, AdmissionTimeoutError } from './admission-errors.js';
export { meteredLimit } from './metered-limit.js';
export { resourcesOperation } from './resources-operation.js';
// Every type of types.ts is public: a new one needs no edit here.
export type * from './types.js';
