// The public surface of @gym/dashboards: the generator (also behind the `gym-dashboards` bin),
// its types, and the one name function other code needs (how the OpenTelemetry JS Prometheus
// exporter spells a metric or label name).

export { GENERATED_PATHS, type GeneratedFiles, generate, writeGenerated } from './generate.js';
export { sanitizeName } from './prometheus-names.js';
export type { GenerateOptions, SeriesKind, UnitSuffix } from './types.js';
