// The verifier is a real subprocess: `/bin/sh` running a few lines of script. A shell
// costs about a millisecond of CPU to start, where a Node child costs fifty; on two cores
// that difference decides whether run time stays flat under load (the point of the demo)
// or grows with CPU contention. The script `exec`s its final `sleep`, so each verifier is
// exactly one process and killing it leaves no grandchild behind.

import { spawn } from 'node:child_process';
import { clientGoneError } from './http-error.js';

/** What the verifier is asked to do. `hang` and `crash` exist so the demo can show those outcomes. */
export type VerifierMode = 'normal' | 'hang' | 'crash';

/** One verification request. */
export interface VerifierJob {
  readonly answer: string;
  readonly expected: string;
  /** Simulated verification work (running the task's tests), in ms. */
  readonly workMs: number;
  readonly mode: VerifierMode;
}

/** How a verifier run ended, short of the cases that throw. */
export type VerifierResult =
  | { readonly kind: 'completed'; readonly passed: boolean }
  | { readonly kind: 'timeout'; readonly timeoutMs: number }
  | { readonly kind: 'crashed'; readonly signal: NodeJS.Signals };

// $1 mode, $2 work in seconds, $3 answer, $4 expected, $5 how long a hang lasts in seconds.
// Arguments are positional parameters, never interpolated into the script, so no answer can
// inject shell code. `hang` sleeps HANG_MARGIN_MS past the timeout, so a hang always ends as
// `timeout` whatever timeout is configured, and even an orphaned verifier ends by itself
// soon after. `crash` dies by SIGKILL, as an out-of-memory kill would.
const SCRIPT = [
  'case "$1" in',
  '  crash) kill -KILL $$ ;;',
  '  hang) exec sleep "$5" ;;',
  'esac',
  'if [ "$3" = "$4" ]; then echo pass; else echo fail; fi',
  'exec sleep "$2"',
].join('\n');

/** A hanging verifier outlives its timeout by this much (then it ends by itself). */
export const HANG_MARGIN_MS = 10_000;

/** Stdout beyond this is ignored; the verifier prints one word. */
const MAX_OUTPUT_BYTES = 256;

/**
 * Runs one verifier subprocess. Resolves `timeout` after killing a child that ran past
 * `timeoutMs`, `crashed` when the child died by a signal it was not sent by us, and
 * `completed` otherwise. Rejects with an `AbortError` (after killing the child) when
 * `signal` aborts, and with an Error when the child cannot start or exits non-zero.
 */
export function runVerifier(job: VerifierJob, timeoutMs: number, signal?: AbortSignal): Promise<VerifierResult> {
  if (signal?.aborted) return Promise.reject(clientGoneError());
  return new Promise((resolve, reject) => {
    const child = spawn(
      '/bin/sh',
      [
        '-c',
        SCRIPT,
        'verifier',
        job.mode,
        (job.workMs / 1000).toFixed(3),
        job.answer,
        job.expected,
        ((timeoutMs + HANG_MARGIN_MS) / 1000).toFixed(3),
      ],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let output = '';
    let ending: 'timeout' | 'cancelled' | undefined;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (output.length < MAX_OUTPUT_BYTES) output += chunk;
    });
    const timer = setTimeout(() => {
      ending = 'timeout';
      child.kill('SIGKILL');
    }, timeoutMs);
    const onAbort = (): void => {
      ending ??= 'cancelled';
      child.kill('SIGKILL');
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    child.once('error', (error) => {
      done();
      reject(new Error(`verifier could not start: ${error.message}`));
    });
    child.once('close', (code, killedBy) => {
      done();
      if (ending === 'timeout') resolve({ kind: 'timeout', timeoutMs });
      else if (ending === 'cancelled') reject(clientGoneError());
      else if (killedBy !== null) resolve({ kind: 'crashed', signal: killedBy });
      else if (code !== 0) reject(new Error(`verifier exited with code ${code}`));
      else if (output.trim() === 'pass' || output.trim() === 'fail') {
        resolve({ kind: 'completed', passed: output.trim() === 'pass' });
      } else reject(new Error('verifier exited without a verdict'));
    });
  });
}
