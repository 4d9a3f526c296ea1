// `--prometheus`: a Prometheus of the user's own (found on PATH), started for the length of the
// demo on loopback with temporary storage, scraping the fleet through its file_sd targets and
// evaluating the recording and alerting rules of @gym/dashboards, so the dashboard's queries
// and the alerts can be tried against a real fleet. Nothing is downloaded: without an
// installed Prometheus the demo says so and runs without one.

import type { ChildProcess } from 'node:child_process';
import { existsSync, constants as fs } from 'node:fs';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { writeGenerated } from '@gym/dashboards';
import { exited, isRunning, terminate } from './child-exit.js';
import { claim, removeLeftovers, spawnGuarded } from './prometheus-guardian.js';

/** The name of every temporary folder of a local Prometheus starts with this. */
const TEMP_PREFIX = 'gym-demo-prometheus-';
/** Seconds between rule evaluations and file_sd reads: a demo lasts seconds, not hours. */
const INTERVAL = '1s';
/**
 * Seconds between scrapes, and each scrape's timeout (Prometheus allows no timeout longer than
 * the interval). Slow is not down: on a host whose CPUs are busy, a healthy server's event loop
 * answers late (four CPU hogs per core: the server waited for a CPU 58–63 % of the time, its
 * event-loop lag p99 reached 2.4 s, and its slowest scrape took 4.0 s). A 1 s timeout failed 18 of
 * 145 of its scrapes and, in bursts, most of them: `GymTargetDown` fired for a server that
 * answered everything. 5 s answered 31 of 31. Prometheus's own default timeout is 10 s.
 */
export const SCRAPE_SECONDS = 5;
/** How long Prometheus may take to answer /-/ready (a guard against a hang; it takes about a second). */
const READY_TIMEOUT_MS = 60_000;
/**
 * Ports tried: Prometheus cannot report a port it bound itself, so it gets one that was free a
 * moment ago, and another process may take it first (Prometheus then exits: address in use).
 */
const PORT_ATTEMPTS = 3;

/** A running local Prometheus. */
export interface LocalPrometheus {
  /** Its web UI and HTTP API, e.g. `http://127.0.0.1:39091`. */
  readonly url: string;
  /** The file_sd file it watches; write the fleet's endpoints there. */
  readonly targetsFile: string;
  /** Its temporary folder (configuration, rules, storage), removed when it stops. */
  readonly dir: string;
  /** The rule files it loaded. */
  readonly ruleFiles: readonly string[];
  /** Stops it (SIGTERM, then SIGKILL after 5 s) and removes its temporary storage. Safe to call twice. */
  stop(): Promise<void>;
}

/** Options of {@link startLocalPrometheus}. */
export interface LocalPrometheusOptions {
  /** The file_sd file to watch (default: one in the temporary folder). */
  readonly targetsFile?: string | undefined;
  /** The Prometheus binary (default: `prometheus` on PATH; no other folder is tried). */
  readonly binary?: string | undefined;
  /** Picks the port of each attempt (default: {@link freePort}); for tests. */
  readonly pickPort?: (() => Promise<number>) | undefined;
}

/** The Prometheus binary to run, or undefined when none is installed. */
export async function findPrometheus(binary?: string): Promise<string | undefined> {
  const candidates =
    binary !== undefined
      ? [binary]
      : (process.env.PATH ?? '')
          .split(delimiter)
          .filter((dir) => dir !== '')
          .map((dir) => join(dir, 'prometheus'));
  for (const candidate of candidates) {
    try {
      await access(candidate, fs.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A TCP port on 127.0.0.1 that was free a moment ago (for a program that cannot report a port it bound itself). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function config(targetsFile: string, ruleFiles: readonly string[]): string {
  // JSON strings are valid YAML scalars: paths need no further quoting.
  return [
    'global:',
    `  scrape_interval: ${SCRAPE_SECONDS}s`,
    `  scrape_timeout: ${SCRAPE_SECONDS}s`,
    `  evaluation_interval: ${INTERVAL}`,
    'rule_files:',
    ...ruleFiles.map((file) => `  - ${JSON.stringify(file)}`),
    'scrape_configs:',
    '  - job_name: gym-demo',
    '    file_sd_configs:',
    `      - files: [${JSON.stringify(targetsFile)}]`,
    `        refresh_interval: ${INTERVAL}`,
    '',
  ].join('\n');
}

async function waitReady(
  url: string,
  child: ChildProcess,
  stderr: () => string,
  failed: () => Error | undefined,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const failure = failed();
    if (failure !== undefined) throw new Error(`Prometheus could not be started: ${failure.message}`);
    if (!isRunning(child)) {
      throw new Error(
        `Prometheus exited (${child.signalCode ?? `code ${child.exitCode}`}): ${stderr().trim().slice(-500)}`,
      );
    }
    try {
      const response = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1_000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() >= deadline) throw new Error(`Prometheus did not become ready within ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts Prometheus on 127.0.0.1 with the @gym/dashboards rules, watching a file_sd file.
 * Resolves with undefined when no Prometheus is installed; rejects when it fails to start.
 */
export async function startLocalPrometheus(options: LocalPrometheusOptions = {}): Promise<LocalPrometheus | undefined> {
  const binary = await findPrometheus(options.binary);
  if (binary === undefined) return undefined;
  // Folders of earlier runs whose owner was killed with its guardian (nothing left to remove them).
  await removeLeftovers(tmpdir(), TEMP_PREFIX);
  const dir = await mkdtemp(join(tmpdir(), TEMP_PREFIX));
  let child: ChildProcess | undefined;
  try {
    await claim(dir);
    const targetsFile = options.targetsFile ?? join(dir, 'targets.json');
    if (!existsSync(targetsFile)) await writeFile(targetsFile, '[]\n');
    const written = await writeGenerated(join(dir, 'dashboards'));
    const ruleFiles = written.filter((file) => file.endsWith('.rules.yml'));
    const configFile = join(dir, 'prometheus.yml');
    await writeFile(configFile, config(targetsFile, ruleFiles));
    let started: ChildProcess;
    let url: string;
    let killOnExit: () => void;
    for (let attempt = 1; ; attempt++) {
      const port = await (options.pickPort ?? freePort)();
      url = `http://127.0.0.1:${port}`;
      let stderr = '';
      // Under a guardian: Prometheus dies with this process, even on SIGKILL.
      const launched = spawnGuarded(
        binary,
        [
          `--config.file=${configFile}`,
          `--storage.tsdb.path=${join(dir, `data-${attempt}`)}`,
          `--web.listen-address=127.0.0.1:${port}`,
          '--log.level=warn',
        ],
        dir,
      );
      child = launched;
      launched.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-4_000);
      });
      let spawnError: Error | undefined;
      launched.once('error', (error) => {
        spawnError = error;
      });
      // A demo that exits abruptly (a second Ctrl-C) must not leave Prometheus behind.
      // (SIGTERM: the guardian then SIGKILLs Prometheus; a SIGKILLed guardian could not.)
      const kill = (): void => {
        launched.kill('SIGTERM');
      };
      process.once('exit', kill);
      try {
        await waitReady(
          url,
          launched,
          () => stderr,
          () => spawnError,
        );
        started = launched;
        killOnExit = kill;
        break;
      } catch (error) {
        process.removeListener('exit', kill);
        if (attempt >= PORT_ATTEMPTS || !/address already in use/i.test(stderr)) throw error;
        const done = exited(launched);
        launched.kill('SIGTERM'); // it exits by itself; this only makes sure
        await done;
      }
    }
    let stopping: Promise<void> | undefined;
    return {
      url,
      targetsFile,
      dir,
      ruleFiles,
      stop() {
        stopping ??= (async () => {
          process.removeListener('exit', killOnExit);
          await terminate(started, 5_000);
          await rm(dir, { recursive: true, force: true });
        })();
        return stopping;
      },
    };
  } catch (error) {
    if (child !== undefined && isRunning(child)) await terminate(child, 5_000);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** What the demo's `--prometheus` needs to know and where it prints. */
export interface DemoPrometheusOptions {
  /** True when the fleet exposes Prometheus endpoints (not when it exports OTLP). */
  readonly scrapeable: boolean;
  readonly targetsFile?: string | undefined;
  /** Seconds the fleet lingers after the summary. */
  readonly linger: number;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/**
 * `--prometheus` for the demo: starts the local Prometheus and prints its URL, or says why
 * not (no Prometheus installed, or the fleet exports OTLP) and lets the demo run without it.
 * Rejects only when an installed Prometheus fails to start.
 */
export async function startDemoPrometheus(options: DemoPrometheusOptions): Promise<LocalPrometheus | undefined> {
  if (!options.scrapeable) {
    options.err('--prometheus: the fleet exports OTLP, not Prometheus endpoints; no local Prometheus started');
    return undefined;
  }
  const local = await startLocalPrometheus({ targetsFile: options.targetsFile });
  if (local === undefined) {
    options.err(
      '--prometheus: no `prometheus` on PATH; install it (Debian/Ubuntu: apt-get install prometheus; ' +
        'Homebrew: brew install prometheus) or run without --prometheus',
    );
    return undefined;
  }
  options.out(`  Prometheus    ${local.url}  (@gym/dashboards rules loaded; alerts at ${local.url}/alerts)`);
  options.out(`  Prometheus data  ${local.dir}  (removed when the demo ends, even when it is killed)`);
  if (options.linger === 0)
    options.out('  (it stops with the fleet: add --linger <seconds> to keep both up after the summary)');
  return local;
}
