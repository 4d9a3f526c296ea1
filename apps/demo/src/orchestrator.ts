// The demo's command: set up telemetry for the fleet, spawn the resources servers, supervise
// them, drive them, print what their metrics say, and stop everything. This module is the
// only place in the repository that calls `recordActiveServers`: `gym.servers.active` has
// exactly one writer, the process that knows how many servers it started and how many still
// run (it follows every death and restart). It is also the rollout driver: each rollout
// episode the load generator drives ends in `recordRolloutDuration` here.

import { rename, writeFile } from 'node:fs/promises';
import type { Operation } from '@gym/constants';
import { recordActiveServers, recordRolloutDuration } from '@gym/metrics';
import { configureTelemetryEnv, initTelemetry, shutdownTelemetry } from '@gym/otel-bootstrap';
import { type DemoOptions, HELP, parseCommandLine } from './cli-options.js';
import { settleWithin, waitOrAbort } from './deadline.js';
import { Fleet, type FleetMember, type ServerDeath } from './fleet.js';
import { HealthWatch, type HungServer } from './health-watch.js';
import { DEFAULT_WORKERS, type LoadStats, type LoadTarget, runLoad } from './load-generator.js';
import { type LocalPrometheus, startDemoPrometheus } from './local-prometheus.js';
import { defaultMetricsEndpointLimits } from './metrics-endpoint.js';
import { nextSteps } from './next-steps.js';
import type { PromSample } from './prometheus-text.js';
import { FleetReadings } from './readings.js';
import { OrchestratorStartup, startupTracer } from './startup-trace.js';
import { type DeathReport, formatSummary, type LimitsReading, successRates, summariseOperations } from './summary.js';

/** Exit status when a server died unexpectedly during the run, even if it was restarted. */
export const EXIT_SERVER_DIED = 3;
/** How often the orchestrator reads every server's metrics and limits while the load runs. */
const READ_EVERY_MS = 1_000;

// Output that survives a closed pipe (`node orchestrator.js | head -1`): once a stream fails
// (EPIPE), further writes to it are dropped and the run goes on, so the fleet still stops.
const open = { stdout: true, stderr: true };
process.stdout.on('error', () => {
  open.stdout = false;
});
process.stderr.on('error', () => {
  open.stderr = false;
});
const out = (line: string): void => {
  if (open.stdout && !process.stdout.destroyed) process.stdout.write(`${line}\n`);
};
const err = (line: string): void => {
  if (open.stderr && !process.stderr.destroyed) process.stderr.write(`${line}\n`);
};

/** The fleet's state for the progress line. */
interface FleetStatus {
  /** Servers running whose last health check was answered. */
  readonly answering: number;
  readonly live: number;
  readonly size: number;
  readonly deaths: number;
  readonly restarts: number;
}

/** One progress line: rewritten in place on a terminal, printed every 2 s (and once at the end) otherwise. */
function progressReporter(
  durationMs: number,
  fleet: () => FleetStatus,
): { update: (stats: LoadStats) => void; end: (stats: LoadStats) => void; note: (line: string) => void } {
  const tty = process.stderr.isTTY === true;
  let lastPrinted = 0;
  const format = (stats: LoadStats): string => {
    const seconds = stats.elapsedMs / 1000;
    const rate = seconds > 0 ? Math.round(stats.completed / seconds) : 0;
    const totals = { '2xx': 0, '4xx': 0, '5xx': 0 };
    for (const route of Object.values(stats.routes)) {
      totals['2xx'] += route.statuses['2xx'];
      totals['4xx'] += route.statuses['4xx'];
      totals['5xx'] += route.statuses['5xx'];
    }
    const status = fleet();
    const servers =
      `servers answering ${status.answering}/${status.size}` +
      (status.deaths > 0 ? ` (${status.deaths} died, ${status.restarts} restarted)` : '');
    return (
      `load ${seconds.toFixed(1).padStart(5)} / ${(durationMs / 1000).toFixed(0)} s · ${stats.completed} done (${rate}/s) · ` +
      `2xx ${totals['2xx']} · 4xx ${totals['4xx']} · 5xx ${totals['5xx']} · no answer ${stats.noAnswer} · ` +
      `in flight ${stats.inFlight} · ${servers}`
    );
  };
  return {
    update(stats) {
      if (tty) {
        if (open.stderr) process.stderr.write(`\r\x1b[2K${format(stats)}`);
      } else if (stats.elapsedMs - lastPrinted >= 2000) {
        lastPrinted = stats.elapsedMs;
        err(format(stats));
      }
    },
    end(stats) {
      if (tty && open.stderr) process.stderr.write(`\r\x1b[2K${format(stats)}\n`);
      else err(format(stats));
    },
    // A line of its own, without breaking the progress line on a terminal.
    note(line) {
      if (tty && open.stderr) process.stderr.write(`\r\x1b[2K${line}\n`);
      else err(line);
    },
  };
}

async function writeTargets(file: string, endpoints: readonly string[]): Promise<void> {
  const targets = endpoints.map((endpoint) => new URL(endpoint).host);
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify([{ targets, labels: { fleet: 'gym-demo' } }], null, 2)}\n`);
  await rename(temporary, file); // atomic, so a watching Prometheus never reads half a file
}

function causeOf(death: ServerDeath, hung?: HungServer): string {
  if (hung !== undefined)
    return `by SIGKILL from the orchestrator: hung, no answer to /healthz since ${hung.since.toISOString()}`;
  return death.signal !== null ? `by ${death.signal}` : `with exit code ${death.code}`;
}

/** The line that reports a hung server: name, pid, since when. */
function hungLine(hung: HungServer): string {
  return (
    `${hung.member.name} (pid ${hung.member.pid}) is hung: no answer to /healthz since ${hung.since.toISOString()} ` +
    `(${(hung.silentMs / 1000).toFixed(1)} s)${progressOf(hung)}; killing it to restart it`
  );
}

/** What the server's CPU time says about its silence: stopped (it stood still), or an event loop that never got to the check. */
function progressOf(hung: HungServer): string {
  if (hung.cpuMs === undefined) return '';
  return hung.cpuMs < 50
    ? `, its CPU time stood still (${hung.cpuMs} ms)`
    : `, its CPU time moved ${hung.cpuMs} ms but its event loop answered no check`;
}

/** Runs the demo; resolves with the process exit code. */
async function run(options: DemoOptions): Promise<number> {
  const stop = new AbortController();
  let fleet: Fleet | undefined;
  let signals = 0;
  const onSignal = (name: NodeJS.Signals): void => {
    signals++;
    if (signals === 1) {
      err(`\n${name}: stopping the load and the fleet (again to force)`);
      stop.abort();
    } else {
      fleet?.kill();
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Started by another program over IPC (a test, a supervisor): its going away is a stop too.
  if (process.connected) process.once('disconnect', () => onSignal('SIGTERM'));

  // Telemetry for the whole fleet, written into the environment the servers inherit.
  // Variables the user set win (set-default semantics).
  const otlp = (process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').trim() !== '';
  const runId = configureTelemetryEnv(
    otlp
      ? { enabled: true, exporter: 'otlp', spanGroups: 'default,sandbox', sandboxResourceSampleIntervalSeconds: 1 }
      : // The `sandbox` group also gates the sandbox lifecycle metrics, so it is on here too.
        { enabled: true, exporter: 'prometheus', spanGroups: 'default,sandbox' },
  );
  const prometheus = runId !== null && process.env.NEMO_GYM_OTEL_EXPORTER?.trim().toLowerCase() === 'prometheus';
  if (prometheus) {
    if ((process.env.OTEL_EXPORTER_PROMETHEUS_HOST ?? '').trim() === '')
      process.env.OTEL_EXPORTER_PROMETHEUS_HOST = '127.0.0.1';
    // Every process needs its own port: port 0 lets each one bind a free port itself (no race
    // between finding a port and binding it), and each reports the endpoint it got.
    process.env.OTEL_EXPORTER_PROMETHEUS_PORT = '0';
  }
  const telemetry = await initTelemetry({
    serverName: 'orchestrator',
    serverType: 'orchestrator',
    prometheus: defaultMetricsEndpointLimits(),
  });
  // Gym's startup spans: `gym.startup` from this process's start, each server's spawn-to-ready under it.
  const startup = new OrchestratorStartup(startupTracer());
  startup.mark('init_telemetry');
  const exporter = runId === null ? 'off' : (process.env.NEMO_GYM_OTEL_EXPORTER ?? '?');
  out(
    `gym-telemetry demo · run ${runId ?? '-'} · telemetry ${exporter}${otlp && runId !== null ? ` → ${process.env.OTEL_EXPORTER_OTLP_ENDPOINT}` : ''}`,
  );
  out(
    `  orchestrator  pid ${process.pid}${telemetry?.prometheusEndpoint ? `  metrics ${telemetry.prometheusEndpoint}` : ''}`,
  );

  const limits: Partial<Record<Operation, string>> = {
    verify: `async-mutex Semaphore(${options.limit})`,
    tool: `p-limit(${options.toolLimit})`,
    judge: `async-mutex Semaphore(${options.judgeLimit})`,
  };
  const readings = new FleetReadings();
  const deaths: DeathReport[] = [];
  // Servers the health checks found hung (and the orchestrator killed), by pid.
  const hung = new Map<number, HungServer>();
  let health: HealthWatch | undefined;
  let unansweredAtEnd = 0;
  let loadStartedAt: number | undefined;
  let exitCode = 0;
  let completed = false;
  let progress: ReturnType<typeof progressReporter> | undefined;
  const note = (line: string): void => (progress === undefined ? err(line) : progress.note(line));
  const showMember = (member: FleetMember): string =>
    `  ${member.name.padEnd(12)}  pid ${member.pid}  ${member.url}${member.metrics ? `  metrics ${member.metrics}` : ''}`;
  let localPrometheus: LocalPrometheus | undefined;
  try {
    if (options.prometheus) {
      const { targetsFile, linger } = options;
      localPrometheus = await startDemoPrometheus({ scrapeable: prometheus, targetsFile, linger, out, err });
      startup.mark('start_prometheus');
    }
    // The file_sd file Prometheus watches: the orchestrator's endpoint and every live server's,
    // rewritten whenever a restarted server comes back on a new port.
    let targetsFile: string | undefined;
    const writeCurrentTargets = async (): Promise<void> => {
      if (targetsFile === undefined || fleet === undefined) return;
      const endpoints = [telemetry?.prometheusEndpoint, ...fleet.members.map((member) => member.metrics)].filter(
        (endpoint): endpoint is string => typeof endpoint === 'string',
      );
      await writeTargets(targetsFile, endpoints);
    };
    // One write at a time (two servers may come back together); each write reads the fleet anew.
    let targetsWritten: Promise<void> = Promise.resolve();
    const refreshTargets = (): Promise<void> => {
      targetsWritten = targetsWritten.then(writeCurrentTargets, writeCurrentTargets);
      return targetsWritten;
    };
    fleet = await Fleet.start({
      count: options.servers,
      serverArgs: [
        ['--verify-limit', options.limit],
        ['--tool-limit', options.toolLimit],
        ['--judge-limit', options.judgeLimit],
        ['--verify-timeout-ms', options.verifyTimeoutMs],
        ['--verify-max-queued', options.maxQueued],
        ['--verify-queue-timeout-ms', options.queueTimeoutMs],
        ['--tool-max-queued', options.toolMaxQueued],
        ['--tool-queue-timeout-ms', options.toolQueueTimeoutMs],
        ['--judge-max-queued', options.judgeMaxQueued],
        ['--judge-queue-timeout-ms', options.judgeQueueTimeoutMs],
      ].flatMap(([flag, value]) => [String(flag), String(value)]),
      prometheus,
      restartPolicy: {
        budget: options.restarts,
        initialBackoffMs: options.restartBackoffMs,
        maxBackoffMs: Math.max(4_000, options.restartBackoffMs),
      },
      onLog: (name, line) => note(`[${name}] ${line}`),
      onDeath: (death, restartInMs) => {
        recordActiveServers(fleet?.live ?? 0);
        const reading = readings.of(death.pid);
        const loadSeconds = loadStartedAt === undefined ? 0 : (performance.now() - loadStartedAt) / 1000;
        const cause = causeOf(death, hung.get(death.pid));
        deaths.push({
          name: death.name,
          pid: death.pid,
          cause,
          at: death.at,
          loadSeconds,
          lastReadSecondsBefore: reading?.at === undefined ? undefined : (performance.now() - reading.at) / 1000,
        });
        note(
          `${death.name} (pid ${death.pid}) died ${cause} ${loadSeconds.toFixed(1)} s into the load; ` +
            (restartInMs === null
              ? `restart budget (${options.restarts}) spent: it stays down`
              : `restarting it in ${restartInMs} ms`),
        );
      },
      onRestarted: (member) => {
        recordActiveServers(fleet?.live ?? 0);
        const index = deaths.findLastIndex((death) => death.name === member.name && death.restartedAs === undefined);
        const death = deaths[index];
        if (death !== undefined) {
          deaths[index] = {
            ...death,
            restartedAs: { pid: member.pid, afterMs: Date.now() - death.at.getTime() },
          };
        }
        note(
          `${member.name} restarted (restart ${member.restart} of ${options.restarts}): pid ${member.pid} ${member.url}` +
            (member.metrics ? ` metrics ${member.metrics}` : ''),
        );
        // A restarted server has a new metrics port: Prometheus must follow it.
        refreshTargets().catch((error: unknown) =>
          note(`could not rewrite the Prometheus targets: ${error instanceof Error ? error.message : String(error)}`),
        );
      },
      onRestartFailed: (name, reason, retryInMs) => {
        note(
          `${name} could not be restarted: ${reason}; ${retryInMs === null ? 'budget spent, it stays down' : `trying again in ${retryInMs} ms`}`,
        );
      },
      onSpawn: (name) => startup.spawned(name),
    });
    startup.mark('spawn_servers');
    startup.finish();
    const supervised = fleet;
    recordActiveServers(supervised.live);
    health = new HealthWatch({
      members: () => supervised.members,
      hungAfterMs: options.hungAfterMs,
      onHung: (found) => {
        hung.set(found.member.pid, found);
        note(hungLine(found));
        found.member.child.kill('SIGKILL'); // a stopped process too; the fleet restarts it like a dead one
      },
    });
    health.start();
    const watch = health;
    for (const member of supervised.members) out(showMember(member));
    if (prometheus)
      out(
        options.linger > 0
          ? `  (the metrics endpoints stay up ${options.linger} s after the summary: --linger)`
          : '  (the metrics endpoints end with the run: --linger <seconds> keeps them up after the summary)',
      );
    targetsFile = options.targetsFile ?? localPrometheus?.targetsFile;
    if (targetsFile !== undefined) {
      await refreshTargets();
      out(`  Prometheus file_sd targets written to ${targetsFile}`);
    }
    const workers = DEFAULT_WORKERS;
    out(
      `Load: ${options.duration} s${options.requests ? ` or ${options.requests} requests` : ''}; per server ` +
        `${workers.verify} verify workers on ${limits.verify}, ${workers.tool} tool on ${limits.tool}, ` +
        `${workers.judge} judge on ${limits.judge}, ${workers.sandbox} sandbox, ` +
        `${workers.rollout ?? 0} rollout (a tool call, then a verify).`,
    );

    progress = progressReporter(options.duration * 1000, () => ({
      answering: watch.answering,
      live: supervised.live,
      size: supervised.size,
      deaths: deaths.length,
      restarts: supervised.restarts,
    }));
    const targets: LoadTarget[] = Array.from({ length: supervised.size }, (_, index) => ({
      name: supervised.nameOf(index),
      url: () => supervised.urlOf(index),
    }));
    // Read every server about once a second, so a server that dies keeps its figures.
    const reading = new AbortController();
    const reader = (async () => {
      while (!reading.signal.aborted) {
        await readings.read(supervised.members);
        await waitOrAbort(READ_EVERY_MS, reading.signal);
      }
    })();
    loadStartedAt = performance.now();
    let load: LoadStats;
    try {
      load = await runLoad({
        targets,
        durationMs: options.duration * 1000,
        maxRequests: options.requests,
        workers,
        signal: stop.signal,
        onProgress: progress.update,
        onRollout: (ms) => recordRolloutDuration(ms),
        failVerifiesMs: options.failVerifiesMs,
        stallVerifiesMs: options.stallVerifiesMs,
      });
    } finally {
      reading.abort();
      await reader;
    }
    progress.end(load);
    progress = undefined;

    // The last reading of the servers still running; the dead keep theirs.
    const running = supervised.members;
    const finalReadAt = performance.now();
    await readings.read(running);
    // A server that did not answer this last read is not presented as it is now: its figures
    // are its last reading, and the summary says how old that is.
    const stale = running.flatMap((member) => {
      const reading = readings.of(member.pid);
      if (reading !== undefined && reading.at !== undefined && reading.at >= finalReadAt) return [];
      const age = reading?.at === undefined ? undefined : (performance.now() - reading.at) / 1000;
      return [
        `${member.name} (pid ${member.pid}) did not answer at the end: ` +
          (age === undefined ? 'never read' : `its figures are its last reading, ${age.toFixed(1)} s old`),
      ];
    });
    const all = readings.all;
    const samples: PromSample[] = all.flatMap((entry) => entry.samples ?? []);
    const limitReadings = all.flatMap((entry) => (entry.limits === undefined ? [] : [entry.limits]));
    const unreadable = all.flatMap((entry) =>
      !entry.hasMetrics
        ? [`${entry.name} (pid ${entry.pid}) has no Prometheus endpoint (exporter ${exporter})`]
        : entry.samples === undefined
          ? [`${entry.name} (pid ${entry.pid}): ${entry.metricsError ?? 'never read'}`]
          : [],
    );
    const endStates = running.flatMap((member) => {
      const reading = readings.of(member.pid);
      const fresh = reading?.at !== undefined && reading.at >= finalReadAt;
      return !fresh || reading?.limits === undefined ? [] : [reading.limits];
    });
    const sumEnd = (key: 'active' | 'queued'): number =>
      endStates.reduce(
        (total, state: LimitsReading) => total + state.verify[key] + state.tool[key] + state.judge[key],
        0,
      );
    out('');
    out(
      formatSummary({
        servers: supervised.size,
        limits,
        operations: summariseOperations(samples),
        successRates: successRates(samples),
        load,
        unreadable: [...new Set(unreadable)],
        limitReadings,
        deaths,
        atEnd:
          endStates.length > 0
            ? { active: sumEnd('active'), queued: sumEnd('queued'), servers: endStates.length }
            : undefined,
        stale,
      }),
    );

    unansweredAtEnd = stale.length;
    completed = !stop.signal.aborted;
    if (completed) {
      out('');
      for (const line of nextSteps({
        prometheusUrl: localPrometheus?.url,
        linger: options.linger,
        targetsFile: options.targetsFile,
        scrapeable: prometheus,
      }))
        out(line);
    }
    if (options.linger > 0 && completed) {
      out(`\nThe fleet stays up ${options.linger} s for scraping (Ctrl-C to stop now).`);
      await waitOrAbort(options.linger * 1000, stop.signal);
    }
  } catch (error) {
    err(`demo failed: ${(error as Error).message}`);
    exitCode = 1;
  } finally {
    startup.finish();
    await health?.stop();
    recordActiveServers(0);
    await fleet?.stop();
    await localPrometheus?.stop();
    if ((await settleWithin(shutdownTelemetry(), 2_000)) === 'timed out') {
      err('telemetry did not finish flushing within 2 s (is the collector running?); not waiting longer');
    }
  }
  // A signal during the linger is the expected way to end it; one during the load is an interruption.
  if (!completed && exitCode === 0) exitCode = 130;
  if (exitCode === 0 && (deaths.length > 0 || unansweredAtEnd > 0)) exitCode = EXIT_SERVER_DIED;
  if (exitCode === 130) out('Interrupted; every server stopped.');
  else if (exitCode === EXIT_SERVER_DIED && deaths.length === 0) {
    out(
      `Done, but ${unansweredAtEnd} server${unansweredAtEnd === 1 ? '' : 's'} did not answer at the end (see above); every server stopped. Exit status ${EXIT_SERVER_DIED}.`,
    );
    err(
      `exit status ${EXIT_SERVER_DIED}: ${unansweredAtEnd} server${unansweredAtEnd === 1 ? '' : 's'} did not answer at the end`,
    );
  } else if (exitCode === EXIT_SERVER_DIED) {
    const names = [...new Set(deaths.map((death) => death.name))].join(', ');
    out(
      `Done, but ${deaths.length === 1 ? 'a server' : `${deaths.length} servers`} died or hung unexpectedly (${names}; see above); every server stopped. Exit status ${EXIT_SERVER_DIED}.`,
    );
    err(`exit status ${EXIT_SERVER_DIED}: ${names} died or hung unexpectedly during the run`);
  } else out(exitCode === 0 ? 'Done; every server stopped.' : 'Failed; every server stopped.');
  return exitCode;
}

const parsed = parseCommandLine(process.argv.slice(2));
if (parsed.kind === 'help') {
  out(HELP);
} else if (parsed.kind === 'error') {
  err(`${parsed.message}\nRun with --help for the options.`);
  process.exitCode = 2;
} else {
  run(parsed.options).then(
    (code) => process.exit(code),
    (error: unknown) => {
      err(`demo failed: ${String(error)}`);
      process.exit(1);
    },
  );
}
