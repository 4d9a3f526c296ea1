// The Prometheus names of every series of the instrument table of @gym/constants, as the
// OpenTelemetry JS Prometheus exporter writes them (no unit suffix), as an OpenTelemetry
// Collector writes them (unit suffixes), and with the suffixes the caller adds.

import { INSTRUMENTS, type InstrumentEntry, type InstrumentId, type InstrumentKind } from '@gym/constants';

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

const SUFFIX_PATTERN = /^[a-zA-Z][a-zA-Z0-9_]{0,62}$/;
/** Suffixes with a meaning of their own in Prometheus. */
const RESERVED_SUFFIXES = ['total', 'bucket', 'sum', 'count', 'created', 'info'];
const KINDS: readonly SeriesKind[] = ['histogram', 'counter', 'gauge'];

/** How the Prometheus exporters type each kind of instrument. */
export const PROMETHEUS_KIND: Readonly<Record<InstrumentKind, SeriesKind>> = {
  histogram: 'histogram',
  counter: 'counter',
  'observable counter': 'counter',
  'up-down counter': 'gauge',
  gauge: 'gauge',
  'observable up-down counter': 'gauge',
  'observable gauge': 'gauge',
};

/** Every unit of `INSTRUMENTS`, each once: what `--name-suffix <unit>=<suffix>` accepts. */
export const SERIES_UNITS: readonly string[] = [...new Set(Object.values(INSTRUMENTS).map(({ unit }) => unit))].filter(
  (unit) => unit !== '',
);

/** A metric or label name as the exporter sanitises it (`nemo.gym.server.name` → `nemo_gym_server_name`). */
export function sanitizeName(name: string): string {
  const sanitized = name.replace(/[^a-zA-Z0-9_]/g, '_').replace(/_{2,}/g, '_');
  return /^[0-9]/.test(sanitized) ? `_${sanitized}` : sanitized;
}

/** Names of one series in Prometheus: `series` is what to select (a counter's `_total`, a histogram's `_bucket`). */
export interface PrometheusSeriesNames {
  readonly base: string;
  readonly series: string;
  readonly bucket: string;
  readonly sum: string;
  readonly count: string;
}

/** The Prometheus names of an instrument, with the unit suffix a pipeline adds (not repeated if already there). */
export function prometheusNames(
  instrument: Pick<InstrumentEntry, 'name' | 'kind' | 'unit'>,
  suffixes: readonly UnitSuffix[] = [],
): PrometheusSeriesNames {
  const kind = PROMETHEUS_KIND[instrument.kind];
  let base = sanitizeName(instrument.name);
  if (kind === 'counter' && base.endsWith('_total')) base = base.slice(0, -'_total'.length);
  const suffix = suffixes.find((rule) => rule.unit === instrument.unit && (rule.kinds ?? KINDS).includes(kind))?.suffix;
  if (suffix !== undefined && !base.endsWith(`_${suffix}`)) base = `${base}_${suffix}`;
  return {
    base,
    series: kind === 'counter' ? `${base}_total` : kind === 'histogram' ? `${base}_bucket` : base,
    bucket: `${base}_bucket`,
    sum: `${base}_sum`,
    count: `${base}_count`,
  };
}

/** The suffixes an OpenTelemetry Collector adds for the units our instruments use (`_ratio` on gauges only). */
export const COLLECTOR_UNIT_SUFFIXES: readonly UnitSuffix[] = [
  { unit: 'ms', suffix: 'milliseconds' },
  { unit: 's', suffix: 'seconds' },
  { unit: 'By', suffix: 'bytes' },
  { unit: '1', suffix: 'ratio', kinds: ['gauge'] },
];

export const COLLECTOR_PRESET = 'collector';

/** A value quoted for an error message, cut short: a command line can hold anything. */
function quote(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

/** Parses one `--name-suffix` value: `collector` or `<unit>=<suffix>`, for {@link checkNameSuffixes}. */
export function parseNameSuffix(value: string): readonly UnitSuffix[] {
  if (value === COLLECTOR_PRESET) return COLLECTOR_UNIT_SUFFIXES;
  const at = value.indexOf('=');
  if (at < 0)
    throw new RangeError(`name suffix ${quote(value)} is not valid; expected "${COLLECTOR_PRESET}" or <unit>=<suffix>`);
  return [{ unit: value.slice(0, at), suffix: value.slice(at + 1) }];
}

/**
 * Checks unit suffixes from the API or the CLI: a known unit, a suffix that is a name and no
 * Prometheus type suffix, and one suffix per unit and kind (only the first would apply). Returns
 * the rules without those that only repeat earlier ones; a RangeError names the first bad rule.
 */
export function checkNameSuffixes(rules: readonly UnitSuffix[]): readonly UnitSuffix[] {
  const first = new Map<string, UnitSuffix>();
  return rules.filter((rule) => {
    const { unit, suffix } = rule;
    if (
      !SERIES_UNITS.includes(unit) ||
      !SUFFIX_PATTERN.test(suffix) ||
      RESERVED_SUFFIXES.includes(suffix.toLowerCase())
    ) {
      throw new RangeError(
        `name suffix ${quote(`${unit}=${suffix}`)} is not valid; expected unit one of ${SERIES_UNITS.join(', ')} and a suffix matching ${SUFFIX_PATTERN}, not one of ${RESERVED_SUFFIXES.join(', ')}`,
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
    return adds;
  });
}

/** The Prometheus names of one series in each naming read, the JS exporter's first, each once. */
export type Naming = (id: InstrumentId) => readonly PrometheusSeriesNames[];

/** Names for JS servers scraped directly, servers behind a Collector, and a pipeline adding `suffixes`. */
export function naming(suffixes: readonly UnitSuffix[] = []): Naming {
  const pipelines = [[], COLLECTOR_UNIT_SUFFIXES, suffixes];
  return (id) => {
    const seen = new Set<string>();
    return pipelines
      .map((pipeline) => prometheusNames(INSTRUMENTS[id], pipeline))
      .filter((names) => !seen.has(names.base) && seen.add(names.base) !== undefined);
  };
}

/** `wrap(name)` for each naming of one series, joined with `or` (the names differ, so no label set is dropped). */
export function eitherNaming(
  names: Naming,
  id: InstrumentId,
  part: keyof PrometheusSeriesNames = 'series',
  wrap: (name: string) => string = (name) => name,
): string {
  const each = names(id).map((variant) => wrap(variant[part]));
  return each.length === 1 ? each[0]! : `(${each.join(' or ')})`;
}
