// `@gym/dashboards/internal` is no public promise: it exists for gym-telemetry's own tests and
// changes in any release. Users generate the rules with `generate()` or the `gym-dashboards` bin.
//
// `rulesYaml` renders the two rule files with every range window, the alerts' memory and every
// `for:` multiplied by one factor, so a live test against a real Prometheus takes minutes, not
// hours: at 1/15 a 5-minute window with a 10-minute `for:` becomes 20 s with 40 s. Everything else
// is the public generator's text; at scale 1 the files are byte-identical to `generate()`'s.
// The recorded names (`…:rate5m`) and the annotations' wording keep the shipped durations, and
// the fewest calls a failing or refused share needs stays 100 calls per (now shorter) window.

import { type GeneratedFiles, render } from './generate.js';
import type { GenerateOptions } from './types.js';

/** Options of {@link rulesYaml}: the generator's, and the factor for every duration. */
export interface ScaledRulesOptions extends GenerateOptions {
  /** Multiplies every range window, memory and `for:` (e.g. `1 / 15`); 1 is the shipped rules. */
  readonly timeScale: number;
}

type RuleFiles = Pick<GeneratedFiles, 'prometheus/gym-recording.rules.yml' | 'prometheus/gym-alerts.rules.yml'>;

/** The two rule files of the public generator, with every duration scaled by `timeScale`. */
export function rulesYaml({ timeScale, ...options }: ScaledRulesOptions): RuleFiles {
  const files = render(options, timeScale);
  return {
    'prometheus/gym-recording.rules.yml': files['prometheus/gym-recording.rules.yml'],
    'prometheus/gym-alerts.rules.yml': files['prometheus/gym-alerts.rules.yml'],
  };
}
