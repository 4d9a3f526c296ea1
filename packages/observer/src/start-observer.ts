// One sampler per meter source, one handle per caller. `startObserver` resolves the meter the
// way every gym-telemetry library does (injected provider, else the global
// provider, only while exporting); with none, it returns a handle that does nothing and starts
// no timer. A second start on the same meter joins the running sampler (shared by every copy of
// this package in the process) and gets a handle of its own: each `stop()` releases only its
// own handle, and the sampler stops when the last handle does. So the bootstrap stopping its
// handle at shutdown never freezes the series of a user's observer.
//
// Each part (lag, process metrics, gc, the in-flight series) starts on its own: a meter that
// refuses one instrument costs that part only, reported once.

import { resolveMeter, sharedSlot } from '@gym/core/internal';
import type { Meter } from '@opentelemetry/api';
import { createLagHistogram, EventLoopLagSampler } from './event-loop-lag.js';
import { createGcHistogram, startGcMetrics } from './gc-metrics.js';
import { inFlightAttributes, inFlightCounter } from './in-flight.js';
import { linuxProc, startProcessMetrics } from './process-metrics.js';
import { reporter, SCOPE } from './scope.js';
import type { Observer, ObserverOptions } from './types.js';
import { lagIntervalOf, serverNameOf } from './validate.js';

/** A running sampler and the number of handles that hold it. */
interface Sampler {
  handles: number;
  stop(): void;
}

// @2: the value changed shape (a sampler with a handle count, not an Observer). A copy of an
// older version in the same process keeps its own registry and its own sampler.
const running = sharedSlot('@gym/observer/running@2', () => new WeakMap<Meter, Sampler>());

const NOOP: Observer = Object.freeze({ stop() {} });

const now = (): number => performance.now();

/**
 * Starts the observer: `gym.event_loop.lag_ms`, `process.*`, `v8js.gc.duration`, and (with
 * `serverName`) the in-flight series at 0. Every call returns its own handle; calls on the same
 * meter share one sampler (a later call's options other than `serverName` are not applied), which
 * stops when the last handle stops. With nothing exporting and nothing injected, does nothing.
 * Bad options throw a `RangeError` at once; telemetry trouble never throws.
 */
export function startObserver(options?: ObserverOptions): Observer {
  const lagIntervalMs = lagIntervalOf(options?.lagIntervalMs);
  const serverName = serverNameOf('startObserver: options.serverName', options?.serverName);
  const meter = resolveMeter(options, SCOPE, reporter);
  if (meter === undefined) return NOOP;
  const held = meter;
  let sampler = running.get(held);
  if (sampler === undefined) {
    sampler = createSampler(held, lagIntervalMs, serverName);
    running.set(held, sampler);
  } else if (serverName !== undefined) {
    // The running sampler may have started without this name: its idle series still starts at 0.
    publishInFlight(held, serverName);
  }
  sampler.handles += 1;
  const shared = sampler;
  let released = false;
  return Object.freeze({
    stop() {
      if (released) return;
      released = true;
      shared.handles -= 1;
      if (shared.handles > 0) return;
      if (running.get(held) === shared) running.delete(held);
      try {
        shared.stop();
      } catch (error) {
        reporter.warnOnce('stop', 'stopping the observer failed', error);
      }
    },
  });
}

function createSampler(meter: Meter, lagIntervalMs: number, serverName: string | undefined): Sampler {
  const stops: Array<() => void> = [];
  const sampler: Sampler = {
    handles: 0,
    stop() {
      for (const stop of stops) stop();
    },
  };
  attempt('lag', () => {
    const lag = new EventLoopLagSampler(createLagHistogram(meter), lagIntervalMs, now);
    stops.push(() => lag.stop());
    lag.start();
  });
  attempt('process', () => {
    const metrics = startProcessMetrics(meter, linuxProc());
    stops.push(() => metrics.stop());
  });
  attempt('gc', () => {
    const gc = startGcMetrics(createGcHistogram(meter));
    stops.push(() => gc.stop());
  });
  if (serverName !== undefined) publishInFlight(meter, serverName);
  return sampler;
}

/** Publishes `gym.server.requests.in_flight` at 0 under `serverName` (adding 0 changes no count). */
function publishInFlight(meter: Meter, serverName: string): void {
  attempt('in-flight', () => inFlightCounter(meter).add(0, inFlightAttributes(serverName)));
}

function attempt(part: string, start: () => void): void {
  try {
    start();
  } catch (error) {
    reporter.warnOnce(`start-${part}`, `starting the observer's ${part} metrics failed; the rest runs`, error);
  }
}
