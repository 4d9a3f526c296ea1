// The orchestrator itself paused (SIGSTOP, then SIGCONT: what Ctrl-Z then `fg`, a long GC pause
// or a VM that was not scheduled do): three pauses, each longer than the hung delay, while its
// servers run on. Time during which the supervisor did not run is not its servers' silence: no
// server is called hung or killed, and the run exits 0. (Before the watch kept its own running
// clock, every server was SIGKILLed as hung on resume and the run exited 3.)

import { setTimeout as sleep } from 'node:timers/promises';
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
const HUNG_AFTER_MS = 6_000;
// Longer than the hung delay, and than a server's keep-alive timeout (5 s + 1 s): the watcher's pooled
// connections are closed by the servers during the pause, so the first check after it fails at once.
const PAUSE_MS = 8_000;
const PAUSES = 3;

let run: Captured | undefined;
let server: number | undefined;
afterEach(async () => {
  const pid = run?.child.pid;
  if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGCONT');
  if (server !== undefined && isAlive(server)) process.kill(server, 'SIGCONT');
  server = undefined;
  await terminate(run?.child);
  run = undefined;
});

describe('an orchestrator that was paused', () => {
  it('does not take its own pauses for its servers hanging: nothing killed, exit 0', async () => {
    // The load outlasts the pauses; 6 s of silence (the default) would make a server hung.
    const duration = Math.ceil((PAUSES * (PAUSE_MS + 2_000)) / 1000) + 6;
    run = spawnNode(
      ORCHESTRATOR,
      ['--servers', '3', '--duration', String(duration), '--hung-after-ms', String(HUNG_AFTER_MS)],
      prometheusEnv(0),
    );
    const current = run;
    const pid = current.child.pid as number;
    await waitFor('the first progress line', () => (/load +\d/.test(current.stderr) ? true : undefined), 60_000);
    const urls = [...current.stdout.matchAll(/server-\d+\s+pid \d+\s+(http:\/\/\S+)/g)].map((line) => line[1]);
    expect(urls).toHaveLength(3);
    let answers = 0;
    for (let pause = 0; pause < PAUSES; pause++) {
      process.kill(pid, 'SIGSTOP');
      // While the orchestrator is stopped, its servers answer an outside client.
      const paused = sleep(PAUSE_MS);
      for (const url of urls) {
        const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(PAUSE_MS) }).catch(
          () => undefined,
        );
        if (response?.ok) answers++;
        await response?.arrayBuffer();
      }
      await paused;
      process.kill(pid, 'SIGCONT');
      await sleep(2_000);
    }
    expect(answers).toBe(PAUSES * urls.length);
    const { code } = await exited(current.child);
    expect(current.stderr).not.toMatch(/is hung/);
    expect(current.stderr).not.toMatch(/died by/);
    expect(code).toBe(0);
    expect(current.stdout).toContain('Done; every server stopped.');
  }, 180_000);

  it('does not blame a server for a check that its own pause made late: a check in flight across the pause', async () => {
    run = spawnNode(
      ORCHESTRATOR,
      ['--servers', '2', '--duration', '20', '--hung-after-ms', String(HUNG_AFTER_MS)],
      prometheusEnv(0),
    );
    const current = run;
    const pid = current.child.pid as number;
    await waitFor('the first progress line', () => (/load +\d/.test(current.stderr) ? true : undefined), 60_000);
    server = Number(/server-1\s+pid (\d+)/.exec(current.stdout)?.[1]);
    // server-1 stops answering for a moment: the watcher's next check to it (within about a
    // second, a check a second) is in flight when the watcher itself stops; server-1 answers it
    // 1.5 s after the watcher runs again. Silent for the watcher: about 3 s of its own running
    // time, well under the hung delay.
    process.kill(server, 'SIGSTOP');
    await sleep(1_200);
    process.kill(pid, 'SIGSTOP');
    await sleep(PAUSE_MS);
    process.kill(pid, 'SIGCONT');
    await sleep(1_500);
    process.kill(server, 'SIGCONT');
    const { code } = await exited(current.child);
    expect(current.stderr).not.toMatch(/is hung/);
    expect(current.stderr).not.toMatch(/died by/);
    expect(code).toBe(0);
  }, 180_000);
});
