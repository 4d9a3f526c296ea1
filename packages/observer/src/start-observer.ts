// One sampler per meter, shared by every copy of this package in the process, and one handle per
// caller: the sampler stops with the last handle, so the bootstrap stopping its own at shutdown
// never freezes the series of a user's observer. Each part starts on its own: a meter that refuses
// one instrument costs that part only, reported once.

import { INSTRUMENTS } from '@gym/constants';
import { createInstrument, invalidChoice, MAX_TIMER_SECONDS, resolveMeter, sharedSlot } from '@gym/core/internal';
import type { Meter } from '@opentelemetry/api';
import { startLagSampler } from './event-loop-lag.js';
import { startGcMetrics } from './gc-metrics.js';
import { inFlightAttributes, inFlightCounter } from './in-flight.js';
import { linuxProc, startProcessMetrics } from './process-metrics.js';
import { reporter, SCOPE } from './scope.js';
import type { Observer, ObserverOptions } from './types.js';

const MAX_LAG_INTERVAL_MS = MAX_TIMER_SECONDS * 1000;
const LAG_RULE = `a finite number of milliseconds from 1 to ${MAX_LAG_INTERVAL_MS}`;

type Sampler = { handles: number; stop(): void }; // a running sampler and the handles that hold it

const running = sharedSlot('@gym/observer/running@2', () => new WeakMap<Meter, Sampler>());

const NOOP: Observer = Object.freeze({ stop() {} });

/**
 * Starts the observer, or joins the one already running on the same meter (its options other
 * than `serverName` are not applied). With nothing exporting and nothing injected, does nothing.
 * Bad options throw a `RangeError` at once; telemetry trouble never throws.
 */
export function startObserver(options?: ObserverOptions): Observer {
  const lagIntervalMs = options?.lagIntervalMs ?? 100;
  if (!Number.isFinite(lagIntervalMs) || lagIntervalMs < 1 || lagIntervalMs > MAX_LAG_INTERVAL_MS) {
    throw invalidChoice('startObserver: options.lagIntervalMs', lagIntervalMs, LAG_RULE);
  }
  const inFlight = inFlightAttributes('startObserver: options.serverName', options?.serverName);
  const meter = resolveMeter(options, SCOPE, reporter);
  if (meter === undefined) return NOOP;
  const sampler = running.get(meter) ?? createSampler(meter, lagIntervalMs);
  running.set(meter, sampler);
  // The named in-flight series starts at 0, even on a sampler started without this name (adding 0 counts nothing).
  if (options?.serverName !== undefined) attempt('in-flight', () => inFlightCounter(meter).add(0, inFlight));
  sampler.handles += 1;
  let released = false;
  return Object.freeze({
    stop() {
      if (released) return;
      released = true;
      sampler.handles -= 1;
      if (sampler.handles > 0) return;
      running.delete(meter);
      try {
        sampler.stop();
      } catch (error) {
        reporter.warnOnce('stop', 'stopping the observer failed', error);
      }
    },
  });
}

function createSampler(meter: Meter, lagIntervalMs: number): Sampler {
  const stops: Array<() => void> = [];
  attempt('lag', () => stops.push(startLagSampler(createInstrument(meter, INSTRUMENTS.eventLoopLag), lagIntervalMs)));
  attempt('process', () => stops.push(startProcessMetrics(meter, linuxProc())));
  attempt('gc', () => stops.push(startGcMetrics(meter)));
  return {
    handles: 0,
    stop() {
      for (const stop of stops) stop();
    },
  };
}

function attempt(part: string, start: () => unknown): void {
  try {
    start();
  } catch (error) {
    reporter.warnOnce(`start-${part}`, `starting the observer's ${part} metrics failed; the rest runs`, error);
  }
}
