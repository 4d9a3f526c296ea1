// A server that stops answering (SIGSTOP: alive, silent), end to end with the built
// orchestrator: the health checks report it as hung with its name, pid and since when, the
// orchestrator kills it and the fleet restarts it like a dead one, the progress line counts
// only servers that answer, and the run exits 3. A server still silent at the end is not shown
// as current: the summary says its figures are stale, and the run exits 3 too.

import { afterEach, describe, expect, it } from '@jest/globals';
import {
  type Captured,
  distFile,
  exited,
  isAlive,
  prometheusEnv,
  spawnNode,
  terminate,
  waitFor,
} from './support/processes.js';

const ORCHESTRATOR = distFile('orchestrator.js');
// Port 0: every process binds its own free port (the orchestrator passes 0 on to its servers).
const PROMETHEUS = prometheusEnv(0);

let run: Captured | undefined;
let stopped: number | undefined;
afterEach(async () => {
  // A stopped process ignores SIGTERM until continued: let it go so it can be reaped.
  if (stopped !== undefined && isAlive(stopped)) process.kill(stopped, 'SIGCONT');
  stopped = undefined;
  await terminate(run?.child);
  run = undefined;
});

function serverPid(stdout: string, name: string): number {
  return Number(new RegExp(`${name}\\s+pid (\\d+)`).exec(stdout)?.[1]);
}

describe('a hung server', () => {
  it('is reported with name, pid and since when, killed, restarted, and the run exits 3', async () => {
    // 8 s without an answer before it is called hung: several progress lines (every 2 s) fall
    // in the time it is alive but silent.
    run = spawnNode(ORCHESTRATOR, ['--servers', '2', '--duration', '40', '--hung-after-ms', '8000'], PROMETHEUS);
    const current = run;
    await waitFor('the first progress line', () => (/load +\d/.test(current.stderr) ? true : undefined), 45_000);
    const victim = serverPid(current.stdout, 'server-2');
    expect(victim).toBeGreaterThan(0);
    const stoppedAt = Date.now();
    process.kill(victim, 'SIGSTOP');
    stopped = victim;
    await waitFor(
      'the progress line to count one server answering while the other is alive',
      () => (/servers answering 1\/2$/m.test(current.stderr) ? true : undefined),
      30_000,
    );
    const report = await waitFor(
      'the hung report',
      () =>
        new RegExp(`server-2 \\(pid ${victim}\\) is hung: no answer to /healthz since (\\S+) \\(([\\d.]+) s\\)`).exec(
          current.stderr,
        ) ?? undefined,
      30_000,
    );
    const since = Date.parse(report[1] as string);
    // Since its last answer: before the SIGSTOP (that answer came from the running process).
    expect(since).toBeLessThanOrEqual(stoppedAt + 1_000);
    expect(Number(report[2])).toBeGreaterThanOrEqual(8);
    await waitFor('the stopped process to be killed', () => (isAlive(victim) ? undefined : true), 30_000);
    await waitFor('the restart', () => (/server-2 restarted/.test(current.stderr) ? true : undefined), 45_000);
    const { code } = await exited(current.child);
    expect(code).toBe(3);
    expect(current.stderr).toMatch(
      new RegExp(
        `server-2 \\(pid ${victim}\\) died by SIGKILL from the orchestrator: hung, no answer to /healthz since`,
      ),
    );
    expect(current.stdout).toMatch(
      new RegExp(`server-2 \\(pid ${victim}\\) died by SIGKILL from the orchestrator: hung, .*; restarted as pid \\d+`),
    );
    expect(current.stdout).toContain('Done, but a server died or hung unexpectedly (server-2; see above)');
  }, 180_000);

  it('still silent at the end: its figures are called stale, not current, and the run exits 3', async () => {
    // The health checks would take 10 minutes to call it hung: the end of the run finds it silent.
    run = spawnNode(ORCHESTRATOR, ['--servers', '2', '--duration', '6', '--hung-after-ms', '600000'], PROMETHEUS);
    const current = run;
    await waitFor('the first progress line', () => (/load +\d/.test(current.stderr) ? true : undefined), 45_000);
    const victim = serverPid(current.stdout, 'server-2');
    process.kill(victim, 'SIGSTOP');
    stopped = victim;
    await waitFor('the summary', () => (current.stdout.includes('Summary:') ? true : undefined), 60_000);
    await waitFor('the end of the summary', () => (/Stale: .*\n/.test(current.stdout) ? true : undefined), 30_000);
    expect(current.stdout).toMatch(
      new RegExp(
        `Stale: server-2 \\(pid ${victim}\\) did not answer at the end: its figures are its last reading, [\\d.]+ s old`,
      ),
    );
    // "After the load" counts the one server that answered, never the silent one.
    expect(current.stdout).toMatch(/over the 1 running server that answered/);
    process.kill(victim, 'SIGCONT'); // let the fleet stop it
    const { code } = await exited(current.child);
    expect(code).toBe(3);
    expect(current.stdout).toContain('Done, but 1 server did not answer at the end');
  }, 180_000);
});
