// Entry point of one resources server process. Started by the orchestrator (which passes
// settings as flags and the telemetry settings in the environment), or by hand:
// `node dist/server.js --name alone --port 8080`. It ends by itself when its orchestrator
// goes away (the IPC channel closes), so a killed orchestrator leaves no server behind.

import { parseArgs } from 'node:util';
import { startupTimeline } from '@gym/observer';
import { initTelemetry, shutdownTelemetry } from '@gym/otel-bootstrap';
import { settleWithin } from './deadline.js';
import { metricsEndpointLimits } from './metrics-endpoint.js';
import { type ResourcesServer, startResourcesServer } from './resources-server.js';
import { serverConfigSchema } from './server-config.js';

/** The message a server sends its orchestrator (and prints as one JSON line) once it listens. */
export interface ReadyMessage {
  readonly type: 'ready';
  readonly name: string;
  readonly pid: number;
  readonly url: string;
  /** The Prometheus scrape URL of this process, or null when metrics do not go to Prometheus. */
  readonly metrics: string | null;
}

/** The settings flags, one per field of the server's config (`--verify-limit` → `verifyLimit`). */
const SETTING_FLAGS = [
  'verify-limit',
  'tool-limit',
  'judge-limit',
  'verify-max-queued',
  'verify-queue-timeout-ms',
  'tool-max-queued',
  'tool-queue-timeout-ms',
  'judge-max-queued',
  'judge-queue-timeout-ms',
  'verify-timeout-ms',
  'judge-latency-ms',
  'max-sandboxes',
  'sandbox-create-fail-every',
  'headers-timeout-ms',
  'request-timeout-ms',
  'keep-alive-timeout-ms',
  'max-connections',
] as const;

const camelCase = (flag: string): string => flag.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
const kebabCase = (key: string): string => key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      name: { type: 'string' },
      port: { type: 'string', default: '0' },
      ...Object.fromEntries(SETTING_FLAGS.map((flag) => [flag, { type: 'string' as const }])),
    },
    strict: true,
  });
  const flags = values as Readonly<Record<string, string | undefined>>;
  const given = Object.fromEntries(SETTING_FLAGS.map((flag) => [camelCase(flag), flags[flag]]));
  const parsed = serverConfigSchema.safeParse({ name: values.name, ...given });
  if (!parsed.success) {
    log(
      `server: bad settings: ${parsed.error.issues.map((issue) => `--${kebabCase(issue.path.join('.'))}: ${issue.message}`).join('; ')}`,
    );
    process.exit(2);
  }
  const config = parsed.data;
  // Gym's startup stages, reported once the server serves (spans join TRACEPARENT's trace).
  const startup = startupTimeline({ serverName: config.name });
  startup.mark('parse_config');
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    log(`server: --port must be an integer from 0 to 65535 (got ${JSON.stringify(values.port)})`);
    process.exit(2);
  }

  const telemetry = await initTelemetry({
    serverName: config.name,
    serverType: 'resources_servers',
    prometheus: metricsEndpointLimits(config),
  });
  startup.mark('init_telemetry');
  const server: ResourcesServer = await startResourcesServer(config, port, (message) =>
    log(`${config.name}: ${message}`),
  );
  startup.mark('listen');
  startup.report();

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // Hard stop if a clean one hangs: a server must never outlive its fleet.
      setTimeout(() => process.exit(1), 4_000).unref();
      await server.close();
      // Flushes the last metrics and spans; bounded, for a collector that is not there.
      await settleWithin(shutdownTelemetry(), 2_000);
      process.exit(0);
    })();
    return stopping;
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  process.once('disconnect', () => void stop());
  // The soak benchmark starts servers with --expose-gc and asks for the memory after a full GC.
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === 'function') {
    process.on('message', (message: unknown) => {
      if ((message as { type?: unknown } | null)?.type !== 'gc') return;
      gc();
      process.send?.({ type: 'memory', ...process.memoryUsage() });
    });
  }

  const ready: ReadyMessage = {
    type: 'ready',
    name: config.name,
    pid: process.pid,
    url: server.url,
    metrics: telemetry?.prometheusEndpoint ?? null,
  };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  process.send?.(ready);
}

main().catch((error: unknown) => {
  log(`server: failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
