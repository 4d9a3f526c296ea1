// `@gym/dashboards/internal` is no public promise: it exists for gym-telemetry's own tests and
// changes in any release. `rulesYaml` renders the two rule files with every range window, the
// alerts' memory and every `for:` multiplied by one factor, so a live test against a real
// Prometheus takes minutes, not hours (at 1/15 a 5-minute window with a 10-minute `for:` becomes
// 20 s with 40 s). Recorded names and annotations keep the shipped durations, and the fewest
// calls a share needs stays 100 calls per (shorter) window. At scale 1 the files are `generate()`'s.

import { type GenerateOptions, render } from './generate.js';

/** The two rule files of the public generator, with every duration scaled by `timeScale` (e.g. `1 / 15`). */
export function rulesYaml({ timeScale, ...options }: GenerateOptions & { readonly timeScale: number }) {
  const files = render(options, timeScale);
  return {
    'prometheus/gym-recording.rules.yml': files['prometheus/gym-recording.rules.yml'],
    'prometheus/gym-alerts.rules.yml': files['prometheus/gym-alerts.rules.yml'],
  };
}
