// `--prometheus` leaves nothing behind: a SIGKILLed orchestrator (no chance to stop anything)
// still takes its Prometheus and that Prometheus' temporary folder with it, through the
// guardian whose stdin pipe closes with the orchestrator; and a folder left by an owner that
// is gone is removed at the next start.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireTools } from '@gym/test-kit';
import { afterEach, describe, expect, it } from '@jest/globals';
import { removeLeftovers } from '../src/prometheus-guardian.js';
import { type Captured, distFile, exited, spawnNode, terminate, waitFor } from './support/processes.js';

const ORCHESTRATOR = distFile('orchestrator.js');
const ENV: NodeJS.ProcessEnv = {
  ...process.env,
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  NEMO_GYM_OTEL_ENABLED: '',
  NEMO_GYM_OTEL_EXPORTER: '',
};

let run: Captured | undefined;
afterEach(async () => {
  await terminate(run?.child);
  run = undefined;
});

/** The pid of a process that has exited (and was reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await exited(child);
  return child.pid as number;
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

describe('leftover temporary folders', () => {
  it('removes the folders whose owner is gone, and only those', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'gym-leftovers-'));
    try {
      const make = async (name: string, owner?: number): Promise<void> => {
        await mkdir(join(parent, name, 'data'), { recursive: true });
        if (owner !== undefined) await writeFile(join(parent, name, 'owner.pid'), `${owner}\n`);
      };
      await make('gym-demo-prometheus-dead', await deadPid());
      await make('gym-demo-prometheus-live', process.pid);
      await make('gym-demo-prometheus-unowned');
      await make('someone-else', await deadPid());
      const removed = await removeLeftovers(parent, 'gym-demo-prometheus-');
      expect(removed).toEqual([join(parent, 'gym-demo-prometheus-dead')]);
      expect((await readdir(parent)).sort()).toEqual([
        'gym-demo-prometheus-live',
        'gym-demo-prometheus-unowned',
        'someone-else',
      ]);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});

// Without Prometheus on PATH this suite is skipped and named in the run's summary line.
const tools = requireTools('prometheus');

tools.describe('a SIGKILLed orchestrator with --prometheus', () => {
  it('leaves no Prometheus running and no temporary folder', async () => {
    run = spawnNode(ORCHESTRATOR, ['--servers', '1', '--duration', '2', '--linger', '600', '--prometheus'], ENV);
    const current = run;
    const url = await waitFor(
      'the Prometheus URL',
      () => /Prometheus {4}(http:\/\/127\.0\.0\.1:\d+)/.exec(current.stdout)?.[1],
      60_000,
    );
    const dir = /Prometheus data {2}(\S+)/.exec(current.stdout)?.[1] as string;
    expect(existsSync(dir)).toBe(true);
    expect(await answers(url)).toBe(true);
    await waitFor('the linger', () => (current.stdout.includes('The fleet stays up') ? true : undefined), 60_000);
    current.child.kill('SIGKILL');
    await exited(current.child);
    await waitFor('Prometheus to stop answering', async () => ((await answers(url)) ? undefined : true), 30_000);
    await waitFor('its temporary folder to be removed', () => (existsSync(dir) ? undefined : true), 30_000);
  }, 180_000);
});
