// One observer per meter source. `startObserver` resolves the meter the way every gym-telemetry
// library does (injected meter → injected provider → the global provider, only while
// exporting); with none, it returns an observer that does nothing and starts no timer. A
// second start on the same meter returns the running observer (shared by every copy of this
// package in the process), so the bootstrap and a user can both call it safely.
//
// Each part (lag, process metrics, gc, the in-flight series) starts on its own: a meter that
// refuses one instrument costs that part only, reported once.

import { resolveMeter, sharedSlot } from '@gym/core';
import type { Meter } from '@opentelemetry/api';
import { createLagHistogram, EventLoopLagSampler } from './event-loop-lag.js';
import { createGcHistogram, startGcMetrics } from './gc-metrics.js';
import { inFlightAttributes, inFlightCounter } from './in-flight.js';
import { linuxProc, startProcessMetrics } from './process-metrics.js';
import { reporter, SCOPE } from './scope.js';
import type { Observer, ObserverOptions } from './types.js';
import { injectedOf, lagIntervalOf, optionsOf, own, serverNameOf } from './validate.js';

const running = sharedSlot('@gym/observer/running@1', () => new WeakMap<Meter, Observer>());

const NOOP: Observer = Object.freeze({ stop() {} });

const now = (): number => performance.now();

/**
 * Starts the observer: `gym.event_loop.lag_ms`, `process.*`, `v8js.gc.duration`, and (with
 * `serverName`) the in-flight series at 0. Returns the running observer when one already runs on
 * the same meter (still publishing the in-flight series of a `serverName` it was not started
 * with). With nothing exporting and nothing injected, does nothing. Bad options throw a
 * `RangeError` at once; telemetry trouble never throws.
 */
export function startObserver(options?: ObserverOptions): Observer {
  const given = optionsOf<ObserverOptions>('startObserver: options', options);
  let lagIntervalMs: number;
  let serverName: string | undefined;
  let meter: Meter | undefined;
  try {
    lagIntervalMs = lagIntervalOf(own(given, 'lagIntervalMs'));
    serverName = serverNameOf('startObserver: options.serverName', own(given, 'serverName'));
    const source = {
      meter: injectedOf('startObserver: options.meter', own(given, 'meter')),
      meterProvider: injectedOf('startObserver: options.meterProvider', own(given, 'meterProvider')),
    };
    meter = resolveMeter(source, SCOPE, reporter);
  } catch (error) {
    if (error instanceof RangeError) throw error;
    reporter.warnOnce('options', 'reading the options failed; the observer did not start', error);
    return NOOP;
  }
  if (meter === undefined) return NOOP;
  const existing = running.get(meter);
  if (existing !== undefined) {
    // The running observer may have started without this name: its idle series still starts at 0.
    if (serverName !== undefined) publishInFlight(meter, serverName);
    return existing;
  }
  const observer = createObserver(meter, lagIntervalMs, serverName);
  running.set(meter, observer);
  return observer;
}

function createObserver(meter: Meter, lagIntervalMs: number, serverName: string | undefined): Observer {
  const stops: Array<() => void> = [];
  let stopped = false;
  const observer: Observer = Object.freeze({
    stop() {
      if (stopped) return;
      stopped = true;
      if (running.get(meter) === observer) running.delete(meter);
      for (const stop of stops) {
        try {
          stop();
        } catch (error) {
          reporter.warnOnce('stop', 'stopping part of the observer failed', error);
        }
      }
    },
  });
  attempt('lag', () => {
    const sampler = new EventLoopLagSampler(createLagHistogram(meter), lagIntervalMs, now);
    stops.push(() => sampler.stop());
    sampler.start();
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
  return observer;
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
