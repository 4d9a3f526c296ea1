#!/usr/bin/env node
// `gym-dashboards --out <dir> [--name-suffix …]`: writes the dashboard and the rules.

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeGenerated } from './generate.js';
import { COLLECTOR_PRESET, checkNameSuffixes, parseNameSuffix } from './prometheus-names.js';
import { SERIES_UNITS } from './series.js';
import type { UnitSuffix } from './types.js';

const HELP = `Usage: gym-dashboards --out <dir> [--name-suffix <rule>]... [--quiet]

Writes, under <dir>:
  grafana/gym-telemetry.json            the Grafana dashboard (import it, pick your Prometheus)
  prometheus/gym-recording.rules.yml    recording rules (load before the alerts)
  prometheus/gym-alerts.rules.yml       alerting rules

Options:
  --out <dir>            where to write (created if missing)
  --name-suffix <rule>   also read series your pipeline names with a unit suffix; repeatable,
                         one suffix per unit (not total, bucket, sum, count, created, info).
                         Always read: names as the OpenTelemetry JS Prometheus exporter writes
                         them (no suffix) and as an OpenTelemetry Collector writes them:
                           ${COLLECTOR_PRESET}          the Collector's: ms -> _milliseconds, s -> _seconds,
                                              By -> _bytes, 1 -> _ratio (gauges)
                           <unit>=<suffix>    e.g. ms=msec; units: ${SERIES_UNITS.join(', ')}
  --quiet                print nothing on success
  -h, --help             show this help
`;

function main(argv: readonly string[]): number {
  let values: { out?: string; 'name-suffix'?: string[]; quiet?: boolean; help?: boolean };
  let tokens: readonly { kind: string; name?: string }[];
  try {
    ({ values, tokens } = parseArgs({
      args: [...argv],
      options: {
        out: { type: 'string' },
        'name-suffix': { type: 'string', multiple: true },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
      tokens: true,
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\nRun with --help for the options.\n`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  // parseArgs keeps the last of a repeated option: two folders are a mistake to say, not to guess.
  if (tokens.filter((token) => token.kind === 'option' && token.name === 'out').length > 1) {
    process.stderr.write('--out <dir> was given more than once\nRun with --help for the options.\n');
    return 2;
  }
  if (values.out === undefined || values.out.trim() === '') {
    process.stderr.write('--out <dir> is required\nRun with --help for the options.\n');
    return 2;
  }
  let nameSuffixes: readonly UnitSuffix[];
  try {
    const rules = (values['name-suffix'] ?? []).flatMap((value) => parseNameSuffix(value));
    nameSuffixes = checkNameSuffixes(rules, SERIES_UNITS);
  } catch (error) {
    process.stderr.write(`--name-suffix: ${(error as Error).message}\n`);
    return 2;
  }
  const out = resolve(values.out);
  writeGenerated(out, { nameSuffixes }).then(
    (written) => {
      if (values.quiet !== true) for (const path of written) process.stdout.write(`wrote ${path}\n`);
    },
    (error: unknown) => {
      process.stderr.write(`gym-dashboards: could not write to ${out}: ${(error as Error).message}\n`);
      process.exitCode = 1;
    },
  );
  return 0;
}

process.exitCode = main(process.argv.slice(2));
