// A free loopback port, found by binding port 0 and letting go, for programs the tests start
// that cannot report a port they bound themselves. Another process could take it in between;
// the demo's own servers do not use this: they bind port 0 and report what they got.

export { freePort } from '../../src/local-prometheus.js';
