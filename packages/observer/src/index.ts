// What slows a Node server, as metrics: event-loop lag, requests in flight, process CPU,
// memory, threads and descriptors, and V8 garbage collection; and where its startup time goes.

export { trackInFlight } from './in-flight.js';
export { startObserver } from './start-observer.js';
export { startupTimeline } from './startup-timeline.js';
export type {
  Observer,
  ObserverOptions,
  RequestEmitter,
  StartupTimeline,
  StartupTimelineOptions,
  TrackInFlightOptions,
  Untrack,
} from './types.js';
