// Every demo command of the README, run as written from the repository root through npm
// (the build, npm's option passing and the orchestrator together): each must finish with
// the summary and exit 0. A recipe that lingers is ended the way the README says, with
// Ctrl-C (SIGINT to its process group, as a terminal sends it), and must still end with
// "Done; every server stopped.".

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { waitFor } from './support/processes.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** Every line of a `sh` block that runs the demo (`npm ci && ` is the install step, not run here). */
function recipes(markdown: string): string[] {
  const lines: string[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of (block[1] ?? '').split('\n')) {
      const command = line.trim().replace(/^npm ci && /, '');
      if (/(^|\s)npm run demo\b/.test(command)) lines.push(command);
    }
  }
  return lines;
}

interface Ran {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  /** The exit code, or the signal's conventional 128 + n when it died by one. */
  readonly exit: Promise<number>;
}

function runShell(command: string): Ran {
  // Its own process group, like a terminal's foreground job, so SIGINT reaches npm and the demo alike.
  const child = spawn('bash', ['-c', command], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '', NEMO_GYM_OTEL_ENABLED: undefined },
  });
  const ran: Ran = {
    child,
    stdout: '',
    stderr: '',
    exit: new Promise((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? 128 + (signal === 'SIGINT' ? 2 : 64))),
    ),
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    ran.stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    ran.stderr += chunk;
  });
  return ran;
}

const commands = recipes(README);

describe('the README recipes', () => {
  it('are found: the headline run and every recipe block', () => {
    expect(commands).toContain('npm run demo');
    expect(commands.length).toBeGreaterThanOrEqual(5);
    expect(commands.some((command) => command.includes('--linger'))).toBe(true);
  });

  it.each(commands)(
    '%s',
    async (command) => {
      const ran = runShell(command);
      try {
        if (command.includes('--linger')) {
          await waitFor('the linger', () => (ran.stdout.includes('stays up') ? true : undefined), 60_000);
          process.kill(-(ran.child.pid as number), 'SIGINT');
        }
        const code = await ran.exit;
        // After a Ctrl-C npm itself ends by SIGINT (130) even when the demo exited 0: the demo's own
        // verdict is its last line, checked below.
        const allowed = command.includes('--linger') ? [0, 130] : [0];
        if (!allowed.includes(code)) expect({ code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
        expect(ran.stdout).toContain('Summary: ');
        expect(ran.stdout).toContain('Done; every server stopped.');
        // The options reached the demo: what the command asked for is what ran.
        const duration = /--duration (\d+)/.exec(command)?.[1] ?? '10';
        expect(ran.stdout).toContain(`Load: ${duration} s`);
        const servers = /--servers (\d+)/.exec(command)?.[1] ?? '3';
        expect(ran.stdout).toContain(`Summary: ${servers} server`);
        const limit = /--limit (\d+)/.exec(command)?.[1];
        if (limit !== undefined) expect(ran.stdout).toContain(`verify workers on async-mutex Semaphore(${limit})`);
        if (command.includes('--max-queued')) expect(ran.stdout).toMatch(/verify_slots +\d+ +2 +100 ms/);
        const targets = /--targets-file (\S+)/.exec(command)?.[1];
        if (targets !== undefined) {
          expect(existsSync(targets)).toBe(true);
          const [group] = JSON.parse(readFileSync(targets, 'utf8')) as { targets: string[] }[];
          expect(group?.targets).toHaveLength(Number(servers) + 1);
        }
      } finally {
        if (ran.child.exitCode === null && ran.child.signalCode === null)
          process.kill(-(ran.child.pid as number), 'SIGKILL');
      }
    },
    90_000,
  );
});
