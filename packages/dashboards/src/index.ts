// The public surface of @gym/dashboards: the generator (also behind the `gym-dashboards` bin),
// its types, and how the OpenTelemetry JS Prometheus exporter spells a metric or label name.

export { GENERATED_PATHS, type GeneratedFiles, type GenerateOptions, generate, writeGenerated } from './generate.js';
export { type SeriesKind, sanitizeName, type UnitSuffix } from './prometheus-names.js';
