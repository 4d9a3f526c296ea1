// One function turns an OpenTelemetry instrument name into the Prometheus series names a
// scrape of the OpenTelemetry JS Prometheus exporter shows: every character outside
// [a-zA-Z0-9_] becomes `_` (runs of `_` collapse to one); a monotonic sum gets `_total`
// unless it already ends with it; a histogram is read as `_bucket`/`_sum`/`_count`; and NO
// unit suffix is added (the unit goes to a `# UNIT` comment). Every name in the dashboard and
// the rules comes from here, so a pipeline that renames series is adapted in one place.

import type { InstrumentEntry, InstrumentKind } from '@gym/constants';
import type { SeriesKind, UnitSuffix } from './types.js';

const SUFFIX_PATTERN = /^[a-zA-Z][a-zA-Z0-9_]{0,62}$/;
/** Suffixes Prometheus gives a meaning of its own (`x_total_total`, `x_bucket_bucket` would follow). */
const RESERVED_SUFFIXES = ['total', 'bucket', 'sum', 'count', 'created', 'info'];
const KINDS: readonly SeriesKind[] = ['histogram', 'counter', 'gauge'];

/** How the Prometheus exporters type each kind of instrument, which decides the name's suffixes. */
export const PROMETHEUS_KIND: Readonly<Record<InstrumentKind, SeriesKind>> = {
  histogram: 'histogram',
  counter: 'counter',
  'observable counter': 'counter',
  'up-down counter': 'gauge',
  gauge: 'gauge',
  'observable up-down counter': 'gauge',
  'observable gauge': 'gauge',
};

/** A metric or label name as the exporter sanitises it (`nemo.gym.server.name` → `nemo_gym_server_name`). */
export function sanitizeName(name: string): string {
  const sanitized = name.replace(/[^a-zA-Z0-9_]/g, '_').replace(/_{2,}/g, '_');
  return /^[0-9]/.test(sanitized) ? `_${sanitized}` : sanitized;
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

/**
 * The Prometheus names of an instrument, as the OpenTelemetry JS Prometheus exporter writes
 * them, optionally with a unit suffix a pipeline adds (placed before `_bucket`/`_total`, and
 * not repeated when the name already ends with it).
 */
export function prometheusNames(
  instrument: Pick<InstrumentEntry, 'name' | 'kind' | 'unit'>,
  suffixes: readonly UnitSuffix[] = [],
): PrometheusSeriesNames {
  const { unit } = instrument;
  const kind = PROMETHEUS_KIND[instrument.kind];
  let base = sanitizeName(instrument.name);
  if (kind === 'counter' && base.endsWith('_total')) base = base.slice(0, -'_total'.length);
  const suffix = suffixes.find((rule) => rule.unit === unit && (rule.kinds ?? KINDS).includes(kind))?.suffix;
  if (suffix !== undefined && !base.endsWith(`_${suffix}`)) base = `${base}_${suffix}`;
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

/** A value quoted for an error message, cut short: a command line can hold anything. */
function quote(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

/**
 * Parses one `--name-suffix` value: `collector` (the Collector's unit suffixes) or
 * `<unit>=<suffix>`, e.g. `ms=milliseconds`, for {@link checkNameSuffixes} to check.
 */
export function parseNameSuffix(value: string): readonly UnitSuffix[] {
  if (value === COLLECTOR_PRESET) return COLLECTOR_UNIT_SUFFIXES;
  const at = value.indexOf('=');
  if (at < 0)
    throw new RangeError(`name suffix ${quote(value)} is not valid; expected "${COLLECTOR_PRESET}" or <unit>=<suffix>`);
  return [{ unit: value.slice(0, at), suffix: value.slice(at + 1) }];
}

/**
 * Checks unit suffixes given through the API or the CLI: each unit among `knownUnits`, each
 * suffix a name that is not a Prometheus type suffix such as `total`, and no two rules giving
 * one unit and kind different suffixes (only the first would apply, silently). Returns the rules
 * without those that only repeat earlier ones; a RangeError names the first bad rule.
 */
export function checkNameSuffixes(rules: readonly UnitSuffix[], knownUnits: readonly string[]): readonly UnitSuffix[] {
  const first = new Map<string, UnitSuffix>();
  return rules.filter((rule) => {
    const { unit, suffix } = rule;
    if (
      !knownUnits.includes(unit) ||
      !SUFFIX_PATTERN.test(suffix) ||
      RESERVED_SUFFIXES.includes(suffix.toLowerCase())
    ) {
      throw new RangeError(
        `name suffix ${quote(`${unit}=${suffix}`)} is not valid; expected unit one of ${knownUnits.join(', ')} and a suffix matching ${SUFFIX_PATTERN}, not one of ${RESERVED_SUFFIXES.join(', ')}`,
      );
    }
    let adds = false;
    for (const kind of rule.kinds ?? KINDS) {
      const earlier = first.get(`${kind} ${unit}`);
      if (earlier === undefined) {
        first.set(`${kind} ${unit}`, rule);
        adds = true;
      } else if (earlier.suffix !== suffix) {
        throw new RangeError(
          `name suffix ${quote(`${unit}=${suffix}`)} conflicts with ${quote(`${earlier.unit}=${earlier.suffix}`)}: one unit (and kind) gets one suffix`,
        );
      }
    }
    // A rule that only repeats earlier ones changes no name: it is dropped.
    return adds;
  });
}
