export {
  ALERT_NAMES,
  EVENT_LOOP_LAG_P99_MS,
  FAILING_RATIO_THRESHOLD,
  REFUSED_RATIO_THRESHOLD,
  SATURATION_THRESHOLD,
  VERIFY_SUCCESS_FLOOR,
} from './alert-rules.js';
export { DASHBOARD_UID, VARIABLES } from './dashboard.js';
export { GENERATED_PATHS, generate } from './generate.js';
export type { PrometheusSeriesNames } from './prometheus-names.js';
export {
  COLLECTOR_PRESET,
  COLLECTOR_UNIT_SUFFIXES,
  labelName,
  parseNameSuffix,
  prometheusNames,
  sanitizeName,
} from './prometheus-names.js';
export type { SeriesId } from './series.js';
export { LABELS, SERIES, SERIES_UNITS } from './series.js';
export type {
  AlertRule,
  GeneratedFiles,
  GenerateOptions,
  RecordingRule,
  RuleGroup,
  SeriesDefinition,
  SeriesKind,
  UnitSuffix,
} from './types.js';
export { writeGenerated } from './write-generated.js';
