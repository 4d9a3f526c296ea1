// The public surface and the README's promises, tied to the code.

import { readFileSync } from 'node:fs';
import {
  ENV_TRACEPARENT,
  LAG_BOUNDARIES_MS,
  METRIC_EVENT_LOOP_LAG,
  METRIC_PROCESS_CPU_TIME,
  METRIC_PROCESS_MEMORY_USAGE,
  METRIC_PROCESS_OPEN_FD_COUNT,
  METRIC_PROCESS_THREAD_COUNT,
  METRIC_REQUESTS_IN_FLIGHT,
  METRIC_SERVER_STARTUP_STAGE_DURATION,
  METRIC_V8JS_GC_DURATION,
  SERVER_STARTUP_BOUNDARIES_MS,
  SPAN_SERVER_STARTUP,
  STARTUP_STAGE_LOOP_START,
  STARTUP_STAGE_NODE_BOOTSTRAP,
  V8JS_GC_DURATION_BOUNDARIES_S,
} from '@gym/constants';
import { FAILURE_POLICY } from '@gym/core/internal';
import * as observer from '@gym/observer';
import { expect, it } from '@jest/globals';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

it('exports exactly startObserver, startupTimeline and trackInFlight', () => {
  expect(Object.keys(observer).sort()).toEqual(['startObserver', 'startupTimeline', 'trackInFlight']);
});

it('the README states the failure policy word for word', () => {
  expect(readme).toContain(FAILURE_POLICY);
});

it('the README names every instrument and the startup stages, and leaves their facts to the contract', () => {
  for (const name of [
    METRIC_EVENT_LOOP_LAG,
    METRIC_REQUESTS_IN_FLIGHT,
    METRIC_PROCESS_CPU_TIME,
    METRIC_PROCESS_MEMORY_USAGE,
    METRIC_PROCESS_THREAD_COUNT,
    METRIC_PROCESS_OPEN_FD_COUNT,
    METRIC_V8JS_GC_DURATION,
    METRIC_SERVER_STARTUP_STAGE_DURATION,
    SPAN_SERVER_STARTUP,
    ENV_TRACEPARENT,
    STARTUP_STAGE_NODE_BOOTSTRAP,
    STARTUP_STAGE_LOOP_START,
  ]) {
    expect(readme).toContain(`\`${name}\``);
  }
  expect(readme).toContain('](../../docs/telemetry.md)');
  // Units and buckets are stated once, in docs/telemetry.md.
  for (const list of [LAG_BOUNDARIES_MS, V8JS_GC_DURATION_BOUNDARIES_S, SERVER_STARTUP_BOUNDARIES_MS])
    expect(readme).not.toContain(list.join(', '));
});
