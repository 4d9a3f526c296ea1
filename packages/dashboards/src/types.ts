// The types of @gym/dashboards: the public ones (options, files, unit suffixes) and the
// internal ones its rules are built from.

/**
 * How a series reaches Prometheus, which decides the suffixes its name gets:
 * `histogram` → `_bucket`, `_sum`, `_count`; `counter` (a monotonic sum) → `_total`;
 * `gauge` (gauges and up-down counters) → none.
 */
export type SeriesKind = 'histogram' | 'counter' | 'gauge';

/**
 * A name suffix some pipeline adds for a unit, e.g. an OpenTelemetry Collector's Prometheus
 * exporter writes `gym_verify_duration_ms_milliseconds_bucket` for unit `ms`.
 */
export interface UnitSuffix {
  /** The instrument unit this applies to, e.g. `ms`. */
  readonly unit: string;
  /** What is appended to the name (before `_bucket`/`_total`), without the leading underscore, e.g. `milliseconds`. */
  readonly suffix: string;
  /** Only series of these kinds get it (default: every kind). */
  readonly kinds?: readonly SeriesKind[];
}

/** Options of {@link generate} and the CLI. */
export interface GenerateOptions {
  /** Unit suffixes your pipeline adds to series names (default: none, as the OpenTelemetry JS Prometheus exporter writes them). */
  readonly nameSuffixes?: readonly UnitSuffix[];
}

/** One Prometheus recording rule. */
export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
}

/** One Prometheus alerting rule. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: { readonly severity: 'warning' | 'critical' };
  readonly annotations: { readonly summary: string; readonly description: string; readonly runbook: string };
}

/** A Prometheus rule group. */
export interface RuleGroup<Rule> {
  readonly name: string;
  readonly rules: readonly Rule[];
}
