// Attribute values come only from the bounded sets, and only as what they are: a string of the
// set. A value that merely converts to "verify" (an array, a String object, an object with
// toString) is a programming error, and the body can report its outcome only through the
// validating `op.outcome` setter — never through a field, a property definition or a prototype.

import { ATTR_EXECUTOR, ATTR_OPERATION, ATTR_OPERATION_OUTCOME, INSTRUMENTS, type Outcome } from '@gym/constants';
import { type OperationContext, resourcesOperation } from '@gym/operations';
import { capture, collectMetrics, createMetricHarness, histogramPoint, type PullMetricReader } from '@gym/test-kit';
import { describe, expect, it } from '@jest/globals';
import { Semaphore } from 'async-mutex';

/** Values that convert to `value` without being it. */
const LOOKALIKES: [string, (value: string) => unknown][] = [
  ['an array', (value) => [value]],
  ['a String object', (value) => new String(value)],
  ['an object with toString', (value) => ({ toString: () => value })],
  ['an object with valueOf and toString', (value) => ({ valueOf: () => value, toString: () => value })],
];

describe('operation and executor: strings of their sets, nothing that converts to one', () => {
  it.each(LOOKALIKES)('operation as %s → RangeError, the limit untouched, nothing recorded', async (_name, make) => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const semaphore = new Semaphore(1);
    let ran = false;
    const settled = await capture(
      resourcesOperation(
        semaphore,
        { operation: make('verify'), executor: 'inline', meterProvider: provider } as never,
        () => {
          ran = true;
        },
      ),
    );
    expect(settled.ok).toBe(false);
    if (!settled.ok) {
      expect(settled.error).toBeInstanceOf(RangeError);
      expect((settled.error as Error).message).toMatch(
        /^resourcesOperation: options\.operation must be one of "verify", "tool", "judge", "other"; got object/,
      );
    }
    expect(ran).toBe(false);
    expect(semaphore.getValue()).toBe(1);
    expect((await collectMetrics(reader)).size).toBe(0);
  });

  it.each(LOOKALIKES)('executor as %s → RangeError, the limit untouched, nothing recorded', async (_name, make) => {
    const { meterProvider: provider, reader } = createMetricHarness();
    let ran = false;
    const settled = await capture(
      resourcesOperation(
        null,
        { operation: 'tool', executor: make('inline'), meterProvider: provider } as never,
        () => {
          ran = true;
        },
      ),
    );
    expect(settled.ok).toBe(false);
    if (!settled.ok) {
      expect(settled.error).toBeInstanceOf(RangeError);
      expect((settled.error as Error).message).toMatch(
        /^resourcesOperation: options\.executor must be one of .*; got object/,
      );
    }
    expect(ran).toBe(false);
    expect((await collectMetrics(reader)).size).toBe(0);
  });

  it('inherited names ("toString", "__proto__", "constructor") are not members', async () => {
    for (const name of ['toString', '__proto__', 'constructor', 'hasOwnProperty']) {
      const settled = await capture(
        resourcesOperation(null, { operation: name, executor: 'inline' } as never, () => 1),
      );
      expect(settled.ok ? undefined : settled.error).toBeInstanceOf(RangeError);
      const executor = await capture(resourcesOperation(null, { operation: 'tool', executor: name } as never, () => 1));
      expect(executor.ok ? undefined : executor.error).toBeInstanceOf(RangeError);
    }
  });
});

describe('the last accepted operation and executor are remembered, nothing else', () => {
  it('after accepted calls, a wrong or missing value is still refused, and a new valid one accepted', async () => {
    await expect(resourcesOperation(null, { operation: 'tool', executor: 'inline' }, () => 1)).resolves.toBe(1);
    for (const options of [
      { operation: undefined, executor: 'inline' },
      { operation: 'tool', executor: undefined },
      { operation: 'nope', executor: 'inline' },
      { operation: 'tool', executor: 'nope' },
      { operation: new String('tool'), executor: 'inline' },
    ]) {
      for (const _twice of [1, 2]) {
        const settled = await capture(resourcesOperation(null, options as never, () => 1));
        expect(settled.ok ? undefined : settled.error).toBeInstanceOf(RangeError);
      }
      await expect(resourcesOperation(null, { operation: 'tool', executor: 'inline' }, () => 2)).resolves.toBe(2);
    }
    await expect(resourcesOperation(null, { operation: 'verify', executor: 'inline' }, () => 3)).resolves.toBe(3);
  });
});

describe('the outcome reaches the runner only through the validating setter', () => {
  const SERIES = { [ATTR_OPERATION]: 'tool', [ATTR_EXECUTOR]: 'inline' };

  /** Every duration point carries exactly the three keys, with values from their sets. */
  async function assertOnlyBoundedPoints(reader: PullMetricReader, expected: Outcome) {
    const m = await collectMetrics(reader);
    const points = m.get(INSTRUMENTS.operationDuration.name)?.dataPoints ?? [];
    expect(points).toHaveLength(1);
    for (const point of points) {
      expect(Object.keys(point.attributes).sort()).toEqual(
        [ATTR_EXECUTOR, ATTR_OPERATION, ATTR_OPERATION_OUTCOME].sort(),
      );
    }
    expect(
      histogramPoint(m, INSTRUMENTS.operationDuration.name, { ...SERIES, [ATTR_OPERATION_OUTCOME]: expected }).count,
    ).toBe(1);
  }

  const bypasses: [string, (op: OperationContext) => void][] = [
    [
      'writing an internal field',
      (op) => Object.assign(op, { current: 'bogus', _outcome: 'bogus', outcomeValue: 'bogus' }),
    ],
    [
      'defining an own "outcome" property',
      (op) => Object.defineProperty(op, 'outcome', { value: 'bogus', writable: true }),
    ],
    [
      'swapping the prototype',
      (op) => {
        Object.setPrototypeOf(op, {
          get outcome() {
            return 'bogus';
          },
          set outcome(_v) {},
        });
      },
    ],
  ];

  it.each(bypasses)('%s: not an outcome; the operation ends ok with bounded attributes', async (_name, bypass) => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const options = { operation: 'tool', executor: 'inline', meterProvider: provider } as const;
    const result = await resourcesOperation(new Semaphore(1), options, (op) => {
      bypass(op);
      return 'done';
    });
    expect(result).toBe('done');
    await assertOnlyBoundedPoints(reader, 'ok');
  });

  it.each(bypasses)('%s after setting timeout through the setter: the setter’s value stands', async (_name, bypass) => {
    const { meterProvider: provider, reader } = createMetricHarness();
    const options = { operation: 'tool', executor: 'inline', meterProvider: provider } as const;
    await resourcesOperation(null, options, (op) => {
      op.outcome = 'timeout';
      bypass(op);
    });
    await assertOnlyBoundedPoints(reader, 'timeout');
  });

  it('the context has no public field besides outcome and signal', async () => {
    let keys: string[] = [];
    await resourcesOperation(null, { operation: 'tool', executor: 'inline' }, (op) => {
      op.outcome = 'crashed';
      keys = Object.keys(op);
    });
    expect(keys).toEqual(['signal']);
  });
});
