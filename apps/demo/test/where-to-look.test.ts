// A run ends by saying where to look: a live Prometheus (`--prometheus`), the Grafana dashboard
// file (a path that exists) and how to load it, and `--linger`; the metrics endpoints it prints
// say that they end with the run.

import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from '@jest/globals';
import { type Captured, distFile, exited, prometheusEnv, spawnNode, terminate } from './support/processes.js';

let run: Captured | undefined;
afterEach(async () => {
  await terminate(run?.child);
  run = undefined;
});

describe('the end of a run', () => {
  it('says where to look next: --prometheus, the dashboard file and how to load it, --linger', async () => {
    run = spawnNode(distFile('orchestrator.js'), ['--servers', '1', '--duration', '1'], prometheusEnv(0));
    const { code } = await exited(run.child);
    expect(code).toBe(0);
    const { stdout } = run;
    // The endpoints printed at the start say they end with the run.
    expect(stdout).toMatch(
      /metrics http:\/\/127\.0\.0\.1:\d+\/metrics\n(?:.*\n)*? {2}\(the metrics endpoints end with the run: --linger <seconds> keeps them up after the summary\)/,
    );
    const next = stdout.slice(stdout.indexOf('Where to look next:'));
    expect(stdout).toContain('Where to look next:');
    expect(next).toContain('npm run demo -- --prometheus --linger 120');
    expect(next).toContain('Dashboards → New → Import');
    expect(next).toContain('--linger <seconds> keeps the fleet up after the summary');
    const dashboard = /the Grafana dashboard: (\/\S+\.json)/.exec(next)?.[1];
    expect(dashboard).toBeDefined();
    const json = JSON.parse(readFileSync(dashboard as string, 'utf8')) as { panels?: unknown[] };
    expect(json.panels?.length).toBeGreaterThan(0);
    expect(next.trimEnd().endsWith('Done; every server stopped.')).toBe(true);
  }, 90_000);
});
