// biome-ignore-all lint/performance/noReExportAll: values and types only, no side effects; every export of these files is public (the instrument table's ATTRIBUTE_VALUES is not).
export * from './attributes.js';
export * from './boundaries.js';
export * from './bounded-sets.js';
export * from './concurrency.js';
export * from './environment.js';
export * from './http-pool.js';
export type { InstrumentEntry, InstrumentId, InstrumentKind } from './instrument-table.js';
export { INSTRUMENT_KINDS, INSTRUMENTS } from './instrument-table.js';
export * from './instruments.js';
export * from './observer.js';
export * from './sandbox-lifecycle.js';
export * from './span-groups.js';
export * from './startup.js';
