#!/usr/bin/env node
// `gym-dashboards --out <dir> [--name-suffix …]`: writes the dashboard and the rules.

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeGenerated } from './generate.js';
import {
  COLLECTOR_PRESET,
  checkNameSuffixes,
  parseNameSuffix,
  SERIES_UNITS,
  type UnitSuffix,
} from './prometheus-names.js';

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
  let out: string;
  let quiet: boolean;
  let nameSuffixes: readonly UnitSuffix[];
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        out: { type: 'string', multiple: true },
        'name-suffix': { type: 'string', multiple: true },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help === true) {
      process.stdout.write(HELP);
      return 0;
    }
    // parseArgs would keep the last of a repeated option: two folders are a mistake to say, not to guess.
    if (values.out !== undefined && values.out.length > 1) throw new Error('--out <dir> was given more than once');
    if (values.out?.[0] === undefined || values.out[0].trim() === '') throw new Error('--out <dir> is required');
    out = resolve(values.out[0]);
    quiet = values.quiet;
    nameSuffixes = checkNameSuffixes((values['name-suffix'] ?? []).flatMap(parseNameSuffix));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\nRun with --help for the options.\n`);
    return 2;
  }
  writeGenerated(out, { nameSuffixes }).then(
    (written) => {
      if (!quiet) for (const path of written) process.stdout.write(`wrote ${path}\n`);
    },
    (error: unknown) => {
      process.stderr.write(`gym-dashboards: could not write to ${out}: ${(error as Error).message}\n`);
      process.exitCode = 1;
    },
  );
  return 0;
}

process.exitCode = main(process.argv.slice(2));
