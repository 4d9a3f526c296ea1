// biome-ignore-all lint/performance/noReExportAll: values and types only, no side effects; every export of these files is public (its bucket lists and allowed values are read through INSTRUMENTS).
export * from './attributes.js';
export * from './bounded-sets.js';
export * from './environment.js';
export type { HttpPoolQueueOutcome, InstrumentEntry, InstrumentId, InstrumentKind } from './instrument-table.js';
export { INSTRUMENTS } from './instrument-table.js';
export * from './names.js';
export * from './span-groups.js';
export * from './spans.js';
