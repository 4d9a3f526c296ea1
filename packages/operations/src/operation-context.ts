// The `op` object a body receives. Its outcome is a metric attribute value, so the setter
// validates (a typo fails at the line that wrote it, instead of becoming a new series on a
// dashboard) and the value lives in a private field: no public field, no `defineProperty` and
// no prototype trick can hand the runner an outcome that did not pass the setter.

import { isOutcome, OUTCOMES, type Outcome } from '@gym/constants';
import { invalidChoice } from '@gym/core';
import type { OperationContext } from './types.js';

const ALLOWED = `one of ${OUTCOMES.map((o) => JSON.stringify(o)).join(', ')} (or undefined)`;

let readOutcome: (op: OperationContextImpl) => Outcome | undefined;

/** The body's view of one operation. Internal: users only see {@link OperationContext}. */
export class OperationContextImpl implements OperationContext {
  #outcome: Outcome | undefined = undefined;
  readonly signal: AbortSignal | undefined;

  constructor(signal: AbortSignal | undefined) {
    this.signal = signal;
  }

  get outcome(): Outcome | undefined {
    return this.#outcome;
  }

  set outcome(value: Outcome | undefined) {
    if (value !== undefined && !isOutcome(value)) throw invalidChoice('op.outcome', value, ALLOWED);
    this.#outcome = value;
  }

  static {
    readOutcome = (op) => op.#outcome;
  }
}

/** The outcome the body set through the validating setter, if any. */
export function outcomeSet(op: OperationContextImpl): Outcome | undefined {
  return readOutcome(op);
}
