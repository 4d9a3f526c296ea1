// `@gym/dashboards/internal` is no public promise: it exists for gym-telemetry's own tests and
// changes in any release. Users generate the rules with `generate()` or the `gym-dashboards` bin.
//
// `rulesYaml` renders the two rule files with every range window, the alerts' memory and every
// `for:` multiplied by one factor, so a live test against a real Prometheus takes minutes, not
// hours: at 1/15 a 5-minute window with a 10-minute `for:` becomes 20 s with 40 s. Everything else
// is the public generator's text; at scale 1 the files are byte-identical to `generate()`'s.
// The recorded names (`…:rate5m`) and the annotations' wording keep the shipped durations, and
// the fewest calls a failing or refused share needs stays 100 calls per (now shorter) window.

import { stringify } from 'yaml';
import { alertRules } from './alert-rules.js';
import { generate } from './generate.js';
import { naming } from './naming.js';
import { checkNameSuffixes } from './prometheus-names.js';
import { recordingRules } from './recording-rules.js';
import { SERIES_UNITS } from './series.js';
import type { GeneratedFiles, GenerateOptions } from './types.js';

/** Options of {@link rulesYaml}: the generator's, and the factor for every duration. */
export interface ScaledRulesOptions extends GenerateOptions {
  /** Multiplies every range window, memory and `for:` (e.g. `1 / 15`); 1 is the shipped rules. */
  readonly timeScale: number;
}

/** The two rule files of the public generator, with every duration scaled by `timeScale`. */
export function rulesYaml(
  options: ScaledRulesOptions,
): Pick<GeneratedFiles, 'prometheus/gym-recording.rules.yml' | 'prometheus/gym-alerts.rules.yml'> {
  const { timeScale, ...generateOptions } = options;
  const shipped = generate(generateOptions);
  const names = naming(checkNameSuffixes(generateOptions.nameSuffixes, SERIES_UNITS));
  // The generator's header (its comment lines), then the scaled groups rendered as it renders them.
  const render = (path: keyof GeneratedFiles, groups: unknown): string => {
    const text = shipped[path];
    return text.slice(0, text.indexOf('\ngroups:') + 1) + stringify({ groups }, { lineWidth: 0, indent: 2 });
  };
  return {
    'prometheus/gym-recording.rules.yml': render('prometheus/gym-recording.rules.yml', [
      recordingRules(names, timeScale),
    ]),
    'prometheus/gym-alerts.rules.yml': render('prometheus/gym-alerts.rules.yml', [alertRules(names, timeScale)]),
  };
}
