// The summary's verdict on the limits: queue time alone cannot see a refused call (it never
// waited), so a limit that refuses a sizeable share of its calls is named the bottleneck too.

import { describe, expect, it } from '@jest/globals';
import type { GateState } from '../src/admission.js';
import { type LimitsReading, type OperationSummary, queueingVerdict } from '../src/summary.js';

function gate(limitName: string, counts: Partial<GateState> = {}): GateState {
  return {
    limitName,
    kind: 'semaphore',
    limit: 1,
    maxQueued: 0,
    queueTimeoutMs: 100,
    active: 0,
    queued: 0,
    peakActive: 1,
    peakQueued: 0,
    admitted: 0,
    rejected: 0,
    timedOut: 0,
    cancelled: 0,
    ...counts,
  };
}

function reading(verify: Partial<GateState>): LimitsReading {
  return {
    verify: gate('verify_slots', verify),
    tool: gate('tool_slots', { admitted: 50 }),
    judge: gate('judge_slots'),
  };
}

const verifyRow: OperationSummary = {
  operation: 'verify',
  executor: 'subprocess',
  calls: 100,
  leftQueue: 0,
  queueP50: 0.5,
  queueP99: 2,
  runP50: 70,
  runP99: 300,
  outcomes: new Map([['ok', 100]]),
};
const limits = { verify: 'async-mutex Semaphore(1)' };

describe('the queueing verdict', () => {
  it('names a limit that refused 19 % of its calls the bottleneck, though nobody queued', () => {
    // Two server processes: 81 admitted, 12 refused at once and 7 at the deadline.
    const lines = queueingVerdict({
      operations: [verifyRow],
      limits,
      limitReadings: [
        reading({ admitted: 40, rejected: 6, timedOut: 4 }),
        reading({ admitted: 41, rejected: 6, timedOut: 3 }),
      ],
    });
    expect(lines).toEqual([
      'Refusals: verify refused 19 % of calls (19 of 100: 12 with a full queue, 7 past the queue deadline): the limit is the bottleneck. ' +
        'Raise it (--limit) or add servers; a longer queue only trades refusals for waiting.',
    ]);
  });

  it('names the flag that raises the limit that refused: --judge-limit for judge', () => {
    const lines = queueingVerdict({
      operations: [verifyRow],
      limits,
      limitReadings: [{ ...reading({ admitted: 100 }), judge: gate('judge_slots', { admitted: 80, timedOut: 20 }) }],
    });
    expect(lines).toEqual([
      'Refusals: judge refused 20 % of calls (20 of 100: 0 with a full queue, 20 past the queue deadline): the limit is the bottleneck. ' +
        'Raise it (--judge-limit) or add servers; a longer queue only trades refusals for waiting.',
    ]);
  });

  it('says the limits are not the bottleneck only when nothing queued longer than it ran and refusals stayed under 5 %', () => {
    const lines = queueingVerdict({
      operations: [verifyRow],
      limits,
      limitReadings: [reading({ admitted: 97, rejected: 3 })],
    });
    expect(lines).toEqual([
      'Queueing: no operation waited longer for its limit than it ran, and no limit refused 5 % or more of its calls; the limits are not the bottleneck.',
    ]);
  });

  it('gives both verdicts when calls queued longer than they ran and were refused', () => {
    const lines = queueingVerdict({
      operations: [{ ...verifyRow, queueP50: 300 }],
      limits,
      limitReadings: [reading({ admitted: 90, rejected: 10 })],
    });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^Queueing: verify calls waited 300 ms \(p50\) .* the limit, not the work, is where the time goes/,
    );
    expect(lines[1]).toMatch(/^Refusals: verify refused 10 % of calls \(10 of 100: 10 with a full queue, 0 past/);
  });
});
