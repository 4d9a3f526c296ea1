// While metrics export, the bootstrap starts @gym/observer (event-loop lag, process CPU and
// memory, V8 garbage collection) on the provider that receives this process's metrics:
// a server set up by the bootstrap shows what slows it without a line of its own.
// `NEMO_GYM_OTEL_OBSERVER=0` switches it off. It is loaded like the SDK, with `import()`, and
// only then: a process with telemetry (or metrics, or the observer) off never loads it.

import { SERVER_NAME_PATTERN } from '@gym/constants';
import { describeError } from '@gym/core/internal';
import type { MeterProvider } from '@opentelemetry/api';

/** What the bootstrap keeps of a started observer. */
export interface StartedObserver {
  stop(): void;
}

/**
 * Starts the observer on `meterProvider`, with `serverName` as its in-flight series name when
 * that is a valid series name. Never throws: a failure is said through `report` once and
 * telemetry goes on without the observer.
 */
export async function startProcessObserver(
  meterProvider: MeterProvider,
  serverName: string,
  report: (message: string) => void,
): Promise<StartedObserver | undefined> {
  try {
    const { startObserver } = await import('@gym/observer');
    return startObserver({
      meterProvider,
      ...(SERVER_NAME_PATTERN.test(serverName) ? { serverName } : {}),
    });
  } catch (error) {
    report(`the observer did not start (${describeError(error)}); telemetry carries on without it`);
    return undefined;
  }
}

/** Stops `observer`; never throws. */
export function stopProcessObserver(observer: StartedObserver | undefined): void {
  try {
    observer?.stop();
  } catch {
    // The observer's stop never throws; a broken one must not stop the shutdown either.
  }
}
