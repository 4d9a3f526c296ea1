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
