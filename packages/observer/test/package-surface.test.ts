// The public surface and the README's promises, tied to the code.

import { readFileSync } from 'node:fs';
import {
  ENV_TRACEPARENT,
  INSTRUMENTS,
  SPAN_SERVER_STARTUP,
  STARTUP_STAGE_LOOP_START,
  STARTUP_STAGE_NODE_BOOTSTRAP,
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
    INSTRUMENTS.eventLoopLag.name,
    INSTRUMENTS.requestsInFlight.name,
    INSTRUMENTS.processCpuTime.name,
    INSTRUMENTS.processMemoryUsage.name,
    INSTRUMENTS.processThreadCount.name,
    INSTRUMENTS.processOpenFds.name,
    INSTRUMENTS.gcDuration.name,
    INSTRUMENTS.serverStartupStageDuration.name,
    SPAN_SERVER_STARTUP,
    ENV_TRACEPARENT,
    STARTUP_STAGE_NODE_BOOTSTRAP,
    STARTUP_STAGE_LOOP_START,
  ]) {
    expect(readme).toContain(`\`${name}\``);
  }
  expect(readme).toContain('](../../docs/telemetry.md)');
  // Units and buckets are stated once, in docs/telemetry.md.
  for (const list of [
    INSTRUMENTS.eventLoopLag.boundaries,
    INSTRUMENTS.gcDuration.boundaries,
    INSTRUMENTS.serverStartupStageDuration.boundaries,
  ])
    expect(readme).not.toContain(list.join(', '));
});
