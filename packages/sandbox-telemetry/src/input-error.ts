// Bad input is a programming error and fails fast, so its message must let the caller fix
// it without a debugger: every problem names the field path, the value found there and the
// rule it broke. zod's own messages name the rule but neither the path nor the value.

import { describeValue } from '@gym/core';
import type { z } from 'zod';

/** One problem found in an input. */
export interface InputProblem {
  /** Dotted path with `[i]` for array items, e.g. `components[1].limits.cpu`; `(root)` for the input itself. */
  readonly path: string;
  /** The value found at `path` (`undefined` when missing). */
  readonly value: unknown;
  /** What is allowed. */
  readonly rule: string;
}

/** Thrown when an input to this package is malformed. The message lists every problem. */
export class SandboxInputError extends TypeError {
  /** Every problem, in the order they were found. */
  readonly problems: readonly InputProblem[];

  constructor(subject: string, problems: readonly InputProblem[]) {
    super(`Invalid ${subject}: ${problems.map(describeProblem).join('; ')}`);
    this.name = 'SandboxInputError';
    this.problems = problems;
  }
}

/** Renders `path = <type and value>: rule`. */
function describeProblem(problem: InputProblem): string {
  return `${problem.path} = ${describeValue(problem.value)}: ${problem.rule}`;
}

/** `["components", 1, "name"]` → `components[1].name`. */
export function renderPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text === '' ? '(root)' : text;
}

/** The value at `path` inside `input` (own properties only), or `undefined` when the path does not lead anywhere. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const segment of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

/** Turns zod issues into problems that carry the path, the offending value and the rule. */
export function problemsFromZod(input: unknown, issues: z.ZodError['issues']): InputProblem[] {
  const problems: InputProblem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        problems.push({ path: renderPath(path), value: valueAt(input, path), rule: issue.message });
      }
    } else {
      problems.push({ path: renderPath(issue.path), value: valueAt(input, issue.path), rule: issue.message });
    }
  }
  return problems;
}
