// Where to look after a run: the lines the demo prints after its summary, so that a first run
// leads somewhere: a live Prometheus with the alerts (`--prometheus`), the Grafana dashboard file
// and how to load it, and `--linger`, without which every endpoint printed ends with the run.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The dashboard file as installed with `@gym/dashboards`, or undefined when it cannot be found. */
export function dashboardFile(): string | undefined {
  try {
    const file = fileURLToPath(import.meta.resolve('@gym/dashboards/generated/grafana/gym-telemetry.json'));
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/** What the run had: its Prometheus (when `--prometheus` started one), its linger and its targets file. */
export interface RunShape {
  /** The URL of the local Prometheus, when one ran. */
  readonly prometheusUrl: string | undefined;
  /** Seconds the fleet stays up after the summary. */
  readonly linger: number;
  /** The file_sd file written for a Prometheus of one's own, when any. */
  readonly targetsFile: string | undefined;
  /** Whether the fleet served Prometheus endpoints (not with OTLP or telemetry off). */
  readonly scrapeable: boolean;
}

/** The lines printed after the summary. */
export function nextSteps(run: RunShape, dashboard = dashboardFile()): string[] {
  const lines = ['Where to look next:'];
  if (run.prometheusUrl !== undefined) {
    lines.push(
      `  Prometheus with the @gym/dashboards rules: ${run.prometheusUrl} (alerts at ${run.prometheusUrl}/alerts)` +
        (run.linger > 0
          ? `, up for the ${run.linger} s below`
          : '; it stopped with the fleet: add --linger <seconds> to keep it'),
    );
  } else if (run.scrapeable) {
    lines.push(
      '  a live Prometheus scraping the fleet, with the recording and alerting rules: npm run demo -- --prometheus --linger 120',
    );
  }
  lines.push(
    dashboard === undefined
      ? '  the Grafana dashboard: @gym/dashboards/generated/grafana/gym-telemetry.json (node node_modules/@gym/dashboards/dist/cli.js --out <dir> writes it)'
      : `  the Grafana dashboard: ${dashboard}`,
    '    load it in Grafana: Dashboards → New → Import → upload the file, then pick a Prometheus data source that scrapes the fleet' +
      (run.targetsFile !== undefined
        ? ` (its targets: file_sd ${run.targetsFile})`
        : ' (--targets-file <path> writes its file_sd targets)'),
  );
  if (run.scrapeable)
    lines.push(
      run.linger > 0
        ? `  the metrics endpoints printed above stay up for ${run.linger} s (Ctrl-C ends them sooner)`
        : '  the metrics endpoints printed above end with this run: --linger <seconds> keeps the fleet up after the summary',
    );
  return lines;
}
