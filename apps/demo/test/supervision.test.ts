// The fleet under failure, end to end with the built orchestrator: a server SIGKILLed mid-run
// is restarted, reported on the progress line and in the summary (which server, when, what
// was lost), `gym_servers_active` follows what is really running, the load generator does
// not storm the dead port, and the run exits non-zero. And a closed stdout (`| head -1`)
// never crashes the orchestrator: its servers still stop.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { runLoad } from '../src/load-generator.js';
import { parsePrometheusText } from '../src/prometheus-text.js';
import { type Captured, distFile, exited, isAlive, spawnNode, terminate, waitFor } from './support/processes.js';

const ORCHESTRATOR = distFile('orchestrator.js');
const PROMETHEUS: NodeJS.ProcessEnv = {
  ...process.env,
  NEMO_GYM_OTEL_ENABLED: '1',
  NEMO_GYM_OTEL_EXPORTER: 'prometheus',
  OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
};
const OFF: NodeJS.ProcessEnv = { ...process.env, NEMO_GYM_OTEL_ENABLED: '0', OTEL_EXPORTER_OTLP_ENDPOINT: '' };

let run: Captured | undefined;
afterEach(async () => {
  await terminate(run?.child);
  run = undefined;
});

function serverPid(stdout: string, name: string): number | undefined {
  const found = new RegExp(`${name}\\s+pid (\\d+)`).exec(stdout);
  return found === null ? undefined : Number(found[1]);
}

describe('a server killed mid-run', () => {
  it('is restarted and reported; no retry storm; gym_servers_active follows; exit status 3 with the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gym-supervision-'));
    const targetsFile = join(dir, 'targets.json');
    const targetHosts = (): string[] =>
      (JSON.parse(readFileSync(targetsFile, 'utf8')) as { targets: string[] }[]).flatMap((group) => group.targets);
    // The kill, the restart and the scrapes that see it must all fall inside the load. The
    // restart waits 8 s, so a scraper polling from the moment of the kill sees the fleet at 1
    // however slowly this loaded machine answers a scrape (with the default 250 ms the 1 lasts
    // only as long as a new server takes to start); 40 s of load leaves room for the kill after
    // the first progress line, the 8 s and the new server's start.
    run = spawnNode(
      ORCHESTRATOR,
      ['--servers', '2', '--duration', '40', '--restart-backoff-ms', '8000', '--targets-file', targetsFile],
      PROMETHEUS,
    );
    const current = run;
    await waitFor('the load to start', () => (current.stdout.includes('Load:') ? true : undefined), 45_000);
    const orchestratorMetrics = /orchestrator\s+pid \d+\s+metrics (\S+)/.exec(current.stdout)?.[1];
    expect(orchestratorMetrics).toBeDefined();
    const victim = serverPid(current.stdout, 'server-2') as number;
    const survivor = serverPid(current.stdout, 'server-1') as number;

    // Watch gym_servers_active as a scraper would, from before the kill to after the restart.
    const seen: number[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        try {
          const text = await (await fetch(orchestratorMetrics as string)).text();
          const value = parsePrometheusText(text).find((sample) => sample.name === 'gym_servers_active')?.value;
          if (value !== undefined && seen.at(-1) !== value) seen.push(value);
        } catch {
          // the orchestrator is ending
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    // Mid-run: once a scraper has seen the whole fleet up and the servers have been read once.
    // The watcher stops however this block ends, so a failed wait fails the test instead of hanging it.
    try {
      await waitFor('a scrape of the fleet at 2', () => (seen.includes(2) ? true : undefined), 10_000, 25);
      await waitFor('the first progress line', () => (/load +\d/.test(current.stderr) ? true : undefined), 10_000);
      process.kill(victim, 'SIGKILL');
      await waitFor('the fleet at 1 after the kill', () => (seen.includes(1) ? true : undefined), 30_000, 25);
      await waitFor('the restart', () => (/server-2 restarted/.test(current.stderr) ? true : undefined), 45_000);
      // Prometheus follows the restarted server: its new metrics port replaces the dead one in the file_sd targets.
      const newMetrics = /server-2 restarted .* metrics (\S+)/.exec(current.stderr)?.[1] as string;
      expect(newMetrics).toBeDefined();
      await waitFor(
        'the targets file to name the restarted server',
        () => (targetHosts().includes(new URL(newMetrics).host) ? true : undefined),
        5_000,
        25,
      );
      expect(targetHosts()).toHaveLength(3);
      await waitFor('a scrape after the restart', () => (seen.length >= 3 ? true : undefined), 5_000, 25);
    } finally {
      watching = false;
      await watcher;
    }

    const { code } = await exited(current.child);
    expect(code).toBe(3);
    expect(seen).toEqual([2, 1, 2]);
    expect(current.stderr).toMatch(
      new RegExp(`server-2 \\(pid ${victim}\\) died by SIGKILL .* restarting it in 8000 ms`),
    );
    expect(current.stderr).toMatch(/servers answering 2\/2 \(1 died, 1 restarted\)/);
    expect(current.stdout).toMatch(
      new RegExp(
        `server-2 \\(pid ${victim}\\) died by SIGKILL at \\d{4}-\\d\\d-\\d\\dT[^ ]+ \\([\\d.]+ s into the load\\); restarted as pid \\d+`,
      ),
    );
    expect(current.stdout).toMatch(/Lost: .*\d+ requests? to server-2 got no answer/);
    expect(current.stdout).toContain('Done, but a server died or hung unexpectedly (server-2; see above)');
    expect(current.stderr).toContain('exit status 3: server-2 died or hung unexpectedly');

    // No retry storm: only the requests in flight when it died (16 workers per server) got no
    // answer, a small share of those sent; hammering the dead port would be thousands.
    const sent = Number(/(\d+) requests sent/.exec(current.stdout)?.[1]);
    const noAnswer = [...current.stdout.matchAll(/no answer (\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    expect(sent).toBeGreaterThan(200);
    expect(noAnswer).toBeLessThanOrEqual(30);
    expect(noAnswer / sent).toBeLessThan(0.1);

    const restarted = Number(/restarted as pid (\d+)/.exec(current.stdout)?.[1]);
    for (const pid of [victim, survivor, restarted]) expect(isAlive(pid)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  }, 150_000);
});

describe('the load generator against a server that does not answer', () => {
  it('backs off (one probe at a time, exponentially) instead of storming it, and sends nothing to a server that is down', async () => {
    // A port that refuses connections: bound, then closed.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
      });
    });
    const load = await runLoad({
      targets: [
        { name: 'refusing', url: () => `http://127.0.0.1:${port}` },
        { name: 'down', url: () => undefined },
      ],
      durationMs: 2_000,
      maxRequests: undefined,
      workers: { verify: 8, tool: 2, judge: 4, sandbox: 1 },
      signal: new AbortController().signal,
    });
    const refusing = load.servers.refusing;
    // 15 workers fail together once, then single probes 100 ms, 200 ms, 400 ms … apart: about 20
    // requests in 2 s. Without backoff it would be thousands.
    expect(refusing?.sent).toBeGreaterThanOrEqual(15);
    expect(refusing?.sent).toBeLessThanOrEqual(40);
    expect(refusing?.noAnswer).toBe(refusing?.sent);
    expect(load.servers.down).toEqual({ sent: 0, noAnswer: 0, shed: 0 });
  });
});

describe('a closed stdout', () => {
  it('does not crash the orchestrator (EPIPE), and its servers still stop', async () => {
    run = spawnNode(ORCHESTRATOR, ['--servers', '1', '--duration', '2'], OFF);
    const current = run;
    const pid = await waitFor('the server line', () => serverPid(current.stdout, 'server-1'), 45_000);
    // What `| head -1` does: the reader goes away while the writer still has lines to print.
    current.child.stdout?.destroy();
    const { code, signal } = await exited(current.child);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(current.stderr).not.toMatch(/EPIPE|demo failed/);
    expect(isAlive(pid)).toBe(false);
  }, 90_000);
});
