// The orchestrator as a command: its help and refusals, and its promise of no orphans —
// Ctrl-C mid-load stops the fleet in order, and a killed orchestrator's servers stop by
// themselves. Telemetry is off here (nothing to scrape), which is also the path of a user
// who runs the demo with NEMO_GYM_OTEL_ENABLED=0.

import { describe, expect, it } from '@jest/globals';
import { distFile, exited, isAlive, spawnNode, terminate, waitFor } from './support/processes.js';

const ORCHESTRATOR = distFile('orchestrator.js');
const OFF: NodeJS.ProcessEnv = { ...process.env, NEMO_GYM_OTEL_ENABLED: '0', OTEL_EXPORTER_OTLP_ENDPOINT: '' };

function serverPids(stdout: string): number[] {
  return [...stdout.matchAll(/server-\d+\s+pid (\d+)/g)].map((match) => Number(match[1]));
}

describe('orchestrator command line', () => {
  it('prints the options with --help and exits 0', async () => {
    const run = spawnNode(ORCHESTRATOR, ['--help'], OFF);
    expect((await exited(run.child)).code).toBe(0);
    for (const flag of ['--servers', '--limit', '--duration', '--requests']) expect(run.stdout).toContain(flag);
  });

  it.each([
    [['--servers', '0'], '--servers must be at least 1 (got "0")'],
    [['--limit', 'two'], '--limit must be a number (got "two")'],
    [['--duration', '1.5'], '--duration must be a whole number (got "1.5")'],
    [['--restart-backoff-ms', '60001'], '--restart-backoff-ms must be at most 60000 (got "60001")'],
    [['--fail-verifies-ms', '600001'], '--fail-verifies-ms must be at most 600000 (got "600001")'],
    [['--bogus'], "Unknown option '--bogus'"],
  ])('refuses %j with exit code 2 and says why', async (args, message) => {
    const run = spawnNode(ORCHESTRATOR, args, OFF);
    expect((await exited(run.child)).code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stdout).toBe('');
  });
});

// The deadlines below are failure guards, not expectations: a fleet of Node processes can take
// many seconds to start on a slow, loaded machine, and these tests claim nothing about speed.
describe('orchestrator lifecycle', () => {
  it('finishes a short run by itself, prints the summary and leaves no server running', async () => {
    const run = spawnNode(ORCHESTRATOR, ['--servers', '2', '--duration', '2'], OFF);
    try {
      expect((await exited(run.child)).code).toBe(0);
      expect(run.stdout).toContain('Summary: 2 servers');
      expect(run.stdout).toContain('Done; every server stopped.');
      const pids = serverPids(run.stdout);
      expect(pids).toHaveLength(2);
      for (const pid of pids) expect(isAlive(pid)).toBe(false);
    } finally {
      await terminate(run.child);
    }
  }, 90_000);

  it('stops the load and the fleet on SIGINT (Ctrl-C) and exits 130', async () => {
    const run = spawnNode(ORCHESTRATOR, ['--servers', '2', '--duration', '120'], OFF);
    try {
      await waitFor('the load to start', () => (run.stdout.includes('Load:') ? true : undefined), 45_000);
      const pids = serverPids(run.stdout);
      expect(pids).toHaveLength(2);
      run.child.kill('SIGINT');
      expect((await exited(run.child)).code).toBe(130);
      expect(run.stdout).toContain('Interrupted; every server stopped.');
      for (const pid of pids) expect(isAlive(pid)).toBe(false);
    } finally {
      await terminate(run.child);
    }
  }, 90_000);

  it('leaves no orphan when the orchestrator is killed outright: the servers stop themselves', async () => {
    const run = spawnNode(ORCHESTRATOR, ['--servers', '2', '--duration', '120'], OFF);
    try {
      await waitFor('the load to start', () => (run.stdout.includes('Load:') ? true : undefined), 45_000);
      const pids = serverPids(run.stdout);
      expect(pids).toHaveLength(2);
      run.child.kill('SIGKILL');
      await exited(run.child);
      await waitFor(
        'the orphaned servers to stop',
        () => (pids.every((pid) => !isAlive(pid)) ? true : undefined),
        10_000,
      );
    } finally {
      await terminate(run.child);
    }
  }, 90_000);
});
