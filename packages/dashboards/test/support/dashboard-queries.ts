// Reads the shipped dashboard JSON the way Grafana would: panels (also inside rows), their
// targets, and the template variables.

import { readFileSync } from 'node:fs';
import { packageFile } from './paths.js';

/** One query of one panel. */
export interface PanelQuery {
  readonly panel: string;
  readonly expr: string;
  readonly legend: string;
}

export interface JsonPanel {
  type: string;
  title: string;
  description?: string;
  targets?: { expr: string; legendFormat?: string }[];
  panels?: JsonPanel[];
}

/** The dashboard JSON as checked in. */
export function readDashboard(): {
  panels: JsonPanel[];
  templating: { list: { name: string; type: string; query: string | Record<string, unknown> }[] };
  annotations: { list: { name: string; target?: { expr?: string } }[] };
} {
  return JSON.parse(readFileSync(packageFile('generated/grafana/gym-telemetry.json'), 'utf8'));
}

/** Every query of every panel, in dashboard order. */
export function panelQueries(): PanelQuery[] {
  const queries: PanelQuery[] = [];
  const visit = (panels: JsonPanel[]): void => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        queries.push({ panel: panel.title, expr: target.expr, legend: target.legendFormat ?? '' });
      }
      visit(panel.panels ?? []);
    }
  };
  visit(readDashboard().panels);
  return queries;
}
