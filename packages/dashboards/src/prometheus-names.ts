// One function turns an OpenTelemetry instrument name into the Prometheus series names a
// scrape of the OpenTelemetry JS Prometheus exporter shows: every character outside
// [a-zA-Z0-9_] becomes `_` (runs of `_` collapse to one); a monotonic sum gets `_total`
// unless it already ends with it; a histogram is read as `_bucket`/`_sum`/`_count`; and NO
// unit suffix is added (the unit goes to a `# UNIT` comment). Every name in the dashboard and
// the rules comes from here, so a pipeline that renames series is adapted in one place.

import type { SeriesDefinition, SeriesKind, UnitSuffix } from './types.js';

const INVALID = /[^a-zA-Z0-9_]/g;
const UNDERSCORES = /_{2,}/g;
const SUFFIX_PATTERN = /^[a-zA-Z][a-zA-Z0-9_]{0,62}$/;
/** Suffixes Prometheus gives a meaning of its own (`x_total_total`, `x_bucket_bucket` would follow). */
const RESERVED_SUFFIXES: ReadonlySet<string> = new Set(['total', 'bucket', 'sum', 'count', 'created', 'info']);

/** Whether `suffix` may be a unit suffix: a name, not one of Prometheus' own type suffixes. */
function isSuffix(suffix: unknown): suffix is string {
  return typeof suffix === 'string' && SUFFIX_PATTERN.test(suffix) && !RESERVED_SUFFIXES.has(suffix.toLowerCase());
}

const SUFFIX_ALLOWED = `suffix matching ${SUFFIX_PATTERN} and not one of ${[...RESERVED_SUFFIXES].join(', ')}`;

/** A metric or label name as the exporter sanitises it (`nemo.gym.server.name` → `nemo_gym_server_name`). */
export function sanitizeName(name: string): string {
  const sanitized = name.replace(INVALID, '_').replace(UNDERSCORES, '_');
  return /^[0-9]/.test(sanitized) ? `_${sanitized}` : sanitized;
}

/** The label an attribute key becomes (resource attributes land on `target_info`). */
export function labelName(attributeKey: string): string {
  return sanitizeName(attributeKey);
}

/** Names of one series in Prometheus. */
export interface PrometheusSeriesNames {
  /** The base name: the gauge itself, the histogram without `_bucket`, the counter without `_total`. */
  readonly base: string;
  /** What to select: the gauge, the counter's `_total`, or for a histogram its `_bucket`. */
  readonly series: string;
  /** Histogram only: `<base>_bucket`, `<base>_sum`, `<base>_count`. */
  readonly bucket: string;
  readonly sum: string;
  readonly count: string;
}

function suffixFor(definition: SeriesDefinition, suffixes: readonly UnitSuffix[]): string | undefined {
  for (const rule of suffixes) {
    if (rule.unit !== definition.unit) continue;
    // Own property only: an inherited `kinds` (a polluted Object.prototype) must not narrow a rule.
    const kinds = Object.hasOwn(rule, 'kinds') ? rule.kinds : undefined;
    if (kinds !== undefined && !kinds.includes(definition.kind)) continue;
    return rule.suffix;
  }
  return undefined;
}

/**
 * The Prometheus names of an instrument, as the OpenTelemetry JS Prometheus exporter writes
 * them, optionally with a unit suffix a pipeline adds (placed before `_bucket`/`_total`, and
 * not repeated when the name already ends with it).
 */
export function prometheusNames(
  definition: SeriesDefinition,
  suffixes: readonly UnitSuffix[] = [],
): PrometheusSeriesNames {
  let base = sanitizeName(definition.otelName);
  if (definition.kind === 'counter' && base.endsWith('_total')) base = base.slice(0, -'_total'.length);
  const suffix = suffixFor(definition, suffixes);
  if (suffix !== undefined && !base.endsWith(`_${suffix}`)) base = `${base}_${suffix}`;
  const kind: SeriesKind = definition.kind;
  return {
    base,
    series: kind === 'counter' ? `${base}_total` : kind === 'histogram' ? `${base}_bucket` : base,
    bucket: `${base}_bucket`,
    sum: `${base}_sum`,
    count: `${base}_count`,
  };
}

/**
 * The suffixes an OpenTelemetry Collector (Prometheus exporter or remote write, with metric
 * suffixes on) adds for the units our instruments use. `1` becomes `_ratio` on gauges only.
 */
export const COLLECTOR_UNIT_SUFFIXES: readonly UnitSuffix[] = [
  { unit: 'ms', suffix: 'milliseconds' },
  { unit: 's', suffix: 'seconds' },
  { unit: 'By', suffix: 'bytes' },
  { unit: '1', suffix: 'ratio', kinds: ['gauge'] },
];

/** The word that stands for {@link COLLECTOR_UNIT_SUFFIXES} on the command line. */
export const COLLECTOR_PRESET = 'collector' as const;

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (value === null) return 'null';
  return typeof value;
}

/**
 * Parses one `--name-suffix` value: `collector` (the Collector's unit suffixes) or
 * `<unit>=<suffix>`, e.g. `ms=milliseconds`. Anything else is a RangeError naming the value
 * and what is allowed.
 */
export function parseNameSuffix(value: unknown, knownUnits: readonly string[]): readonly UnitSuffix[] {
  if (value === COLLECTOR_PRESET) return COLLECTOR_UNIT_SUFFIXES;
  const allowed = `"${COLLECTOR_PRESET}" or <unit>=<suffix> with unit one of ${knownUnits.join(', ')} and ${SUFFIX_ALLOWED}`;
  if (typeof value !== 'string')
    throw new RangeError(`name suffix ${describe(value)} is not valid; expected ${allowed}`);
  const at = value.indexOf('=');
  const unit = at < 0 ? '' : value.slice(0, at);
  const suffix = at < 0 ? '' : value.slice(at + 1);
  if (!knownUnits.includes(unit) || !isSuffix(suffix)) {
    throw new RangeError(`name suffix ${describe(value)} is not valid; expected ${allowed}`);
  }
  return [{ unit, suffix }];
}

/**
 * Checks unit suffixes given through the API or the CLI: each an object with an own string
 * `unit` among `knownUnits` and an own `suffix` matching the suffix pattern (not a Prometheus
 * type suffix such as `total`), and no two rules giving one unit and kind different suffixes
 * (only the first would apply, silently). Returns plain copies, without rules that only
 * repeat earlier ones; a RangeError names the first bad entry.
 */
export function checkNameSuffixes(value: unknown, knownUnits: readonly string[]): readonly UnitSuffix[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw new RangeError(`nameSuffixes ${describe(value)} is not valid; expected an array of { unit, suffix }`);
  const rules = value.map((rule: unknown, index) => {
    const own = (key: string): unknown =>
      typeof rule === 'object' && rule !== null && Object.hasOwn(rule, key)
        ? (rule as Record<string, unknown>)[key]
        : undefined;
    const unit = own('unit');
    const suffix = own('suffix');
    const kinds = own('kinds');
    const kindsOk =
      kinds === undefined ||
      (Array.isArray(kinds) && kinds.every((kind) => kind === 'histogram' || kind === 'counter' || kind === 'gauge'));
    if (typeof unit !== 'string' || !knownUnits.includes(unit) || !isSuffix(suffix) || !kindsOk) {
      throw new RangeError(
        `nameSuffixes[${index}] ${describe(typeof unit === 'string' ? `${unit}=${String(suffix)}` : rule)} is not valid; expected unit one of ${knownUnits.join(', ')}, ${SUFFIX_ALLOWED}, kinds among histogram, counter, gauge`,
      );
    }
    return kinds === undefined ? { unit, suffix } : { unit, suffix, kinds: [...(kinds as SeriesKind[])] };
  });
  const ALL_KINDS: readonly SeriesKind[] = ['histogram', 'counter', 'gauge'];
  const firstByUnitAndKind = new Map<string, number>();
  const kept: UnitSuffix[] = [];
  rules.forEach((rule, index) => {
    let adds = false;
    for (const kind of rule.kinds ?? ALL_KINDS) {
      const key = `${rule.unit}\u0000${kind}`;
      const earlier = firstByUnitAndKind.get(key);
      if (earlier === undefined) {
        firstByUnitAndKind.set(key, index);
        adds = true;
        continue;
      }
      const first = rules[earlier] as UnitSuffix;
      if (first.suffix === rule.suffix) continue;
      throw new RangeError(
        `nameSuffixes[${index}] ${describe(`${rule.unit}=${rule.suffix}`)} conflicts with nameSuffixes[${earlier}] ${describe(`${first.unit}=${first.suffix}`)}: one unit (and kind) gets one suffix`,
      );
    }
    // A rule that only repeats earlier ones changes no name: it is dropped.
    if (adds) kept.push(rule);
  });
  return kept;
}
