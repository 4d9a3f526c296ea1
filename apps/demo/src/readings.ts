// What the orchestrator knows about each server process: its Prometheus samples and its
// admission counts (`GET /limits`), read about once a second while the load runs and once
// more at the end. A server that dies keeps its last reading, so its figures stay in the
// summary; only what it recorded after that reading is lost, and the summary says how long
// that was. Counters are cumulative per process, so the fleet's totals are the sum over
// every process's last reading.

import type { FleetMember } from './fleet.js';
import { type PromSample, parsePrometheusText } from './prometheus-text.js';
import type { LimitsReading } from './summary.js';

/** The last reading of one server process. */
export interface ServerReading {
  readonly name: string;
  readonly pid: number;
  /** `performance.now()` of the last successful reading of either kind. */
  at: number | undefined;
  samples: PromSample[] | undefined;
  limits: LimitsReading | undefined;
  /** Why the last attempt to read the metrics failed, if it did. */
  metricsError: string | undefined;
  readonly hasMetrics: boolean;
}

/** Each read is abandoned after this long. */
const READ_TIMEOUT_MS = 2_000;

async function getText(url: string): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response.text();
}

/** The readings of every server process the fleet ran, by pid. */
export class FleetReadings {
  readonly #byPid = new Map<number, ServerReading>();

  /** Reads every given server once (in parallel); a failed read keeps the previous reading. */
  async read(members: readonly FleetMember[]): Promise<void> {
    await Promise.all(members.map((member) => this.#readOne(member)));
  }

  /** The reading of one process, if any. */
  of(pid: number): ServerReading | undefined {
    return this.#byPid.get(pid);
  }

  /** Every process's last reading, in the order they were first read. */
  get all(): readonly ServerReading[] {
    return [...this.#byPid.values()];
  }

  async #readOne(member: FleetMember): Promise<void> {
    let reading = this.#byPid.get(member.pid);
    if (reading === undefined) {
      reading = {
        name: member.name,
        pid: member.pid,
        at: undefined,
        samples: undefined,
        limits: undefined,
        metricsError: undefined,
        hasMetrics: member.metrics !== null,
      };
      this.#byPid.set(member.pid, reading);
    }
    const target = reading;
    const metrics =
      member.metrics === null
        ? Promise.resolve()
        : getText(member.metrics).then(
            (text) => {
              target.samples = parsePrometheusText(text);
              target.metricsError = undefined;
              target.at = performance.now();
            },
            (error: unknown) => {
              target.metricsError = error instanceof Error ? error.message : String(error);
            },
          );
    const limits = getText(`${member.url}/limits`).then(
      (text) => {
        target.limits = JSON.parse(text) as LimitsReading;
        if (member.metrics === null) target.at = performance.now();
      },
      () => {},
    );
    await Promise.all([metrics, limits]);
  }
}
