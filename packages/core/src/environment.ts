// The one grammar of every shared NEMO_GYM_OTEL_* variable (then NEMO_LENS_*, when the first is
// unset or blank), the same for every package and for Gym's Python servers: `1e1` is malformed
// everywhere, `On ` is true everywhere. A library reads a row only when no state is published.

import { ENV_FALLBACK_PREFIX, ENV_PREFIX, FALSY_WORDS, TRUTHY_WORDS } from '@gym/constants';
import { quote } from './report.js';

const TELEMETRY_EXPORTERS = ['otlp', 'console', 'prometheus', 'none'] as const;
/** The values of `NEMO_GYM_OTEL_EXPORTER`. */
export type TelemetryExporter = (typeof TELEMETRY_EXPORTERS)[number];

/** Longest interval a Node timer honours, in seconds (2^31 − 1 ms); beyond it Node fires after 1 ms. */
export const MAX_TIMER_SECONDS = (2 ** 31 - 1) / 1000;
/** Shortest sandbox sample interval, in seconds: a faster loop costs more than it tells. */
export const MIN_SAMPLE_INTERVAL_SECONDS = 0.1;

/** One row of the grammar; `defaultText` and `allowed` say the default and the grammar as docs and messages do. */
export interface GymVariable<T> {
  readonly names: readonly [string, string];
  readonly defaultValue: T;
  readonly defaultText: string;
  readonly allowed: string;
  /** The value of a non-blank text, trimmed by the caller, or `undefined` when it is malformed. */
  parse(text: string): T | undefined;
}

/** A plain decimal: `5`, `0.5`, `.25`, `10.`; no sign, exponent, hex or separators. */
const DECIMAL = /^(?:\d+\.?\d*|\.\d+)$/;
const BOOLEAN = `${TRUTHY_WORDS.join(', ')} (on) or ${FALSY_WORDS.join(', ')} (off), any case`;

function parseBoolean(text: string): boolean | undefined {
  const word = text.toLowerCase();
  if ((TRUTHY_WORDS as readonly string[]).includes(word)) return true;
  return (FALSY_WORDS as readonly string[]).includes(word) ? false : undefined;
}

function parseInterval(text: string): number | undefined {
  const value = DECIMAL.test(text) ? Number(text) : Number.NaN;
  return value === 0 || (value >= MIN_SAMPLE_INTERVAL_SECONDS && value <= MAX_TIMER_SECONDS) ? value : undefined;
}

function gym<T>(key: string, row: Omit<GymVariable<T>, 'names'>): GymVariable<T> {
  return { names: [`${ENV_PREFIX}${key}`, `${ENV_FALLBACK_PREFIX}${key}`], ...row };
}

function flag(key: string, defaultValue: boolean): GymVariable<boolean> {
  const defaultText = defaultValue ? '`1` (on)' : '`0` (off)';
  return gym(key, { defaultValue, defaultText, allowed: BOOLEAN, parse: parseBoolean });
}

/** Every shared Gym variable, by config field. */
export const GYM_VARIABLES = {
  enabled: flag('ENABLED', false),
  spanGroups: gym('SPAN_GROUPS', {
    defaultValue: 'default',
    defaultText: '`default`',
    allowed:
      'comma list of presets (default, per_rollout, all) and span groups, any case; unknown names are reported once and ignored',
    parse: (text) => text,
  }),
  tracesEnabled: flag('TRACES_ENABLED', true),
  metricsEnabled: flag('METRICS_ENABLED', true),
  exporter: gym<TelemetryExporter>('EXPORTER', {
    defaultValue: 'otlp',
    defaultText: '`otlp`',
    allowed: `one of ${TELEMETRY_EXPORTERS.join(', ')}, any case`,
    parse: (text) => TELEMETRY_EXPORTERS.find((exporter) => exporter === text.toLowerCase()),
  }),
  runId: gym<string | undefined>('RUN_ID', {
    defaultValue: undefined,
    defaultText: '`SLURM_JOB_ID`, else 12 random hex characters',
    allowed: '1 to 256 printable ASCII characters, no spaces',
    parse: (text) => (/^[\x21-\x7e]{1,256}$/.test(text) ? text : undefined),
  }),
  serviceNamePerServer: flag('SERVICE_NAME_PER_SERVER', true),
  sandboxResourceSampleIntervalSeconds: gym('SANDBOX_RESOURCE_SAMPLE_INTERVAL_SECONDS', {
    defaultValue: 0,
    defaultText: '`0` (no sampling)',
    allowed: `0 (no sampling) or a plain decimal number of seconds from ${MIN_SAMPLE_INTERVAL_SECONDS} to ${MAX_TIMER_SECONDS}, such as 5 or 0.5`,
    parse: parseInterval,
  }),
  observer: flag('OBSERVER', true),
  shutdownTimeoutMillis: gym('SHUTDOWN_TIMEOUT_MILLIS', {
    defaultValue: 5000,
    defaultText: '`5000`',
    allowed: 'a whole number of milliseconds from 1 to 600000',
    parse: (text) => {
      const value = /^\d+$/.test(text) ? Number(text) : 0;
      return value >= 1 && value <= 600_000 ? value : undefined;
    },
  }),
} as const;

export type RawValue = { readonly name: string; readonly value: string };

/** The first non-blank value among `names`, with its name; `undefined` when all are unset or blank. */
export function readVariable(env: NodeJS.ProcessEnv, names: readonly string[]): RawValue | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') return { name, value };
  }
  return undefined;
}

export type ReadResult<T> =
  | { readonly ok: true; readonly value: T; readonly from: RawValue | undefined }
  | { readonly ok: false; readonly from: RawValue; readonly message: string };

/** Reads one row (Gym's, or a standard variable's): its default when unset or blank, else its parsed value or one message. */
export function readGymVariable<T>(
  env: NodeJS.ProcessEnv,
  variable: Pick<GymVariable<T>, 'defaultValue' | 'allowed' | 'parse'> & { readonly names: readonly string[] },
): ReadResult<T> {
  const from = readVariable(env, variable.names);
  if (from === undefined) return { ok: true, value: variable.defaultValue, from };
  const value = variable.parse(from.value.trim());
  if (value !== undefined) return { ok: true, value, from };
  return { ok: false, from, message: `${from.name}=${quote(from.value)} is not valid (allowed: ${variable.allowed})` };
}
