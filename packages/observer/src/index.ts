// What slows a Node server, as metrics: event-loop lag, requests in flight, process CPU,
// memory, threads and descriptors, and V8 garbage collection.

export { trackInFlight } from './in-flight.js';
export { startObserver } from './start-observer.js';
export type { Observer, ObserverOptions, RequestEmitter, TrackInFlightOptions, Untrack } from './types.js';
