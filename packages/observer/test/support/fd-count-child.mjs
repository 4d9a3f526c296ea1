// Child process for the descriptor-count test: every synchronous fs function is wrapped to
// record its calls (and Node's ESM view of node:fs is synced, so the built observer's own
// imports see the wrappers), and an async hook counts the asynchronous fs requests. The child
// opens `extra` descriptors, collects twice with a real SDK reader and prints one JSON line:
// the synchronous fs calls and asynchronous fs requests made during the collections, the
// descriptor count exported and an independent count of the same process's descriptors.

import { createHook } from 'node:async_hooks';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const extra = Number(process.argv[2] ?? 0);
const sync = [];
let counting = false;
for (const name of Object.keys(fs)) {
  const original = fs[name];
  if (!name.endsWith('Sync') || typeof original !== 'function') continue;
  fs[name] = function (...args) {
    if (counting) sync.push(`${name}(${typeof args[0] === 'string' ? args[0] : typeof args[0]})`);
    return original.apply(this, args);
  };
}
syncBuiltinESMExports();
let asyncRequests = 0;
createHook({
  init(_id, type) {
    if (counting && (type.startsWith('FSREQ') || type === 'DIRHANDLE')) asyncRequests += 1;
  },
}).enable();

const { MeterProvider, MetricReader } = await import('@opentelemetry/sdk-metrics');
const { startObserver } = await import('../../dist/index.js');
class Reader extends MetricReader {
  async onShutdown() {}
  async onForceFlush() {}
}
const reader = new Reader();
const meterProvider = new MeterProvider({ readers: [reader] });
const observer = startObserver({ meterProvider });
const opened = [];
for (let i = 0; i < extra; i += 1) opened.push(fs.openSync('/dev/null', 'r'));

const fdCount = async () => {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((s) => s.metrics)
    .find((m) => m.descriptor.name === 'process.open_file_descriptor.count');
  return { value: metric?.dataPoints[0]?.value, unit: metric?.descriptor.unit };
};
counting = true;
await fdCount();
const exported = await fdCount();
counting = false;
// Independent: a listing of /proc/self/fd holds the listing's own descriptor.
const listed = fs.readdirSync('/proc/self/fd').length - 1;
observer.stop();
for (const fd of opened) fs.closeSync(fd);
process.stdout.write(
  JSON.stringify({
    sync,
    asyncRequests,
    exported: exported.value,
    unit: exported.unit,
    listed,
    statSize: fs.statSync('/proc/self/fd').size,
  }),
);
