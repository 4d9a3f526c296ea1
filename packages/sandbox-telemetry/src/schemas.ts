// zod schemas of the public types. They are strict on purpose: a typo such as `memoryMB`
// would otherwise parse as "memory unknown" and quietly put `memory_mib` under
// `…unspecified` on every record; refusing the unknown field turns it into a clear error.

import { describeError } from '@gym/core';
import type { Context } from '@opentelemetry/api';
import * as z from 'zod';
import { problemsFromZod, SandboxInputError } from './input-error.js';
import { ownSnapshot } from './own-data.js';
import type {
  ComponentAllocation,
  ProcessSandboxHandle,
  ResourceAllocation,
  ResourceDesignator,
  SandboxHandle,
  SandboxResourceAmounts,
  SandboxSpec,
} from './types.js';

/** Component names, sources and designator kinds: bounded, so the keys built from them stay bounded. */
export const NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/;
/** A value that starts like `scheme://` is an endpoint, not an identity. */
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;

/** A strict object whose own issues say what it expected and which fields it allows. */
function strictObject<Shape extends z.ZodRawShape>(shape: Shape) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') return `unknown field (allowed: ${allowed})`;
      if (issue.code === 'invalid_type') return 'must be an object';
      return undefined;
    },
  });
}

const amount = z.number({ error: 'must be a finite number ≥ 0' }).min(0, { error: 'must be a finite number ≥ 0' });

const boundedName = z
  .string({ error: `must be a string matching ${NAME_PATTERN}` })
  .regex(NAME_PATTERN, { error: `must match ${NAME_PATTERN}` });

const identity = z
  .string({ error: 'must be a string of 1 to 256 characters' })
  .min(1, { error: 'must be a string of 1 to 256 characters' })
  .max(256, { error: 'must be a string of 1 to 256 characters' })
  .refine((value) => !URL_LIKE.test(value), { error: 'must be an opaque identity, not an endpoint (no scheme://)' });

/** Schema of {@link SandboxResourceAmounts}: every field optional, numbers finite and ≥ 0, no other fields. */
export const sandboxResourceAmountsSchema = strictObject({
  cpu: amount.optional(),
  memoryMib: amount.optional(),
  diskGib: amount.optional(),
  gpu: amount.optional(),
  gpuType: z
    .string({ error: 'must be a string of 1 to 128 characters' })
    .min(1, { error: 'must be a string of 1 to 128 characters' })
    .max(128, { error: 'must be a string of 1 to 128 characters' })
    .optional(),
});

/** Schema of {@link ResourceDesignator}. */
export const resourceDesignatorSchema = strictObject({
  kind: boundedName,
  id: identity,
  scope: identity.optional(),
});

/** Schema of {@link ComponentAllocation}. */
export const componentAllocationSchema = strictObject({
  name: boundedName,
  requests: sandboxResourceAmountsSchema,
  limits: sandboxResourceAmountsSchema,
});

/** Schema of {@link ResourceAllocation}; component names must be unique (they become attribute keys). */
export const resourceAllocationSchema = strictObject({
  source: boundedName,
  components: z
    .array(componentAllocationSchema, { error: 'must be an array of components' })
    .superRefine((items, ctx) => {
      const seen = new Map<string, number>();
      items.forEach((item, index) => {
        const first = seen.get(item.name);
        if (first === undefined) seen.set(item.name, index);
        else
          ctx.addIssue({
            code: 'custom',
            path: [index, 'name'],
            message: `must be unique (components[${first}] has the same name)`,
            input: item.name,
          });
      });
    }),
  designator: resourceDesignatorSchema.optional(),
  host: resourceDesignatorSchema.optional(),
});

/** Schema of {@link SandboxSpec}: `resources` is checked, other fields pass through untouched. */
export const sandboxSpecSchema = z.looseObject(
  { resources: sandboxResourceAmountsSchema },
  { error: (issue) => (issue.code === 'invalid_type' ? 'must be an object with `resources`' : undefined) },
);

const contextSchema = z.custom<Context>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<Context>).getValue === 'function' &&
    typeof (value as Partial<Context>).setValue === 'function',
  { error: 'must be an OpenTelemetry Context' },
);

/** Schema of {@link SandboxHandle}; providers' extra fields pass through untouched. */
export const sandboxHandleSchema = z.looseObject(
  {
    id: z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' }),
    owned: z.boolean({ error: 'must be a boolean (false for a borrowed handle)' }),
    context: contextSchema.optional(),
  },
  { error: (issue) => (issue.code === 'invalid_type' ? 'must be an object' : undefined) },
);

/** Schema of {@link ProcessSandboxHandle}. */
export const processSandboxHandleSchema = sandboxHandleSchema.extend({
  pid: z.number({ error: 'must be a positive integer' }).int({ error: 'must be a positive integer' }).positive({
    error: 'must be a positive integer',
  }),
  requests: sandboxResourceAmountsSchema.optional(),
  limits: sandboxResourceAmountsSchema.optional(),
});

// The interfaces in types.ts are the documentation; these lines keep the schemas honest
// about them (both directions; arrays compared as readonly), at compile time only.
type Same<A, B> = [A] extends [B]
  ? [B] extends [A]
    ? [keyof A] extends [keyof B]
      ? [keyof B] extends [keyof A]
        ? true
        : false
      : false
    : false
  : false;
type ReadonlyArrays<T> = { [K in keyof T]: T[K] extends (infer E)[] ? readonly E[] : T[K] };
type Check<T extends true> = T;
export type _SchemaChecks = [
  Check<Same<z.output<typeof sandboxResourceAmountsSchema>, SandboxResourceAmounts>>,
  Check<Same<z.output<typeof resourceDesignatorSchema>, ResourceDesignator>>,
  Check<Same<z.output<typeof componentAllocationSchema>, ComponentAllocation>>,
  Check<Same<ReadonlyArrays<z.output<typeof resourceAllocationSchema>>, ResourceAllocation>>,
];

/**
 * Validates an own-property snapshot of `input` (see own-data.ts) and returns that snapshot:
 * prototype-less plain data, so nothing read from it later can come from a polluted
 * `Object.prototype`. An input that cannot even be read (a throwing getter or Proxy) is an
 * input error like any other.
 */
function parseWith<T>(schema: z.ZodType<T>, input: unknown, subject: string): T {
  let snapshot: unknown;
  try {
    snapshot = ownSnapshot(input);
  } catch (error) {
    throw new SandboxInputError(subject, [
      { path: '(root)', value: input, rule: `must be readable plain data (reading it threw ${describeError(error)})` },
    ]);
  }
  const result = schema.safeParse(snapshot);
  if (result.success) return snapshot as T;
  throw new SandboxInputError(subject, problemsFromZod(snapshot, result.error.issues));
}

/** Validates amounts; throws {@link SandboxInputError} naming each bad field, its value and the rule. */
export function parseSandboxResourceAmounts(input: unknown): SandboxResourceAmounts {
  return parseWith(sandboxResourceAmountsSchema, input, 'SandboxResourceAmounts');
}

/** Validates an allocation; throws {@link SandboxInputError} naming each bad field, its value and the rule. */
export function parseResourceAllocation(input: unknown): ResourceAllocation {
  return parseWith(resourceAllocationSchema, input, 'ResourceAllocation');
}

/** Validates a sandbox spec (its `resources`); throws {@link SandboxInputError} naming each bad field. */
export function parseSandboxSpec(input: unknown): SandboxSpec {
  return parseWith(sandboxSpecSchema, input, 'SandboxSpec');
}

/**
 * Checks a sandbox handle and returns the same object (not a copy: providers key their own
 * state by handle identity); throws {@link SandboxInputError} naming each bad field.
 */
export function checkSandboxHandle<H extends SandboxHandle>(input: H): H {
  parseWith(sandboxHandleSchema, input, 'SandboxHandle');
  return input;
}

/** Checks a process sandbox handle and returns the same object; throws {@link SandboxInputError} naming each bad field. */
export function checkProcessSandboxHandle(input: unknown): ProcessSandboxHandle {
  parseWith(processSandboxHandleSchema, input, 'ProcessSandboxHandle');
  return input as ProcessSandboxHandle;
}

/** What this package reads of a handle: its validated own-property snapshot. */
export function viewSandboxHandle(input: unknown): SandboxHandle {
  return parseWith(sandboxHandleSchema, input, 'SandboxHandle');
}

/** {@link viewSandboxHandle} for a process sandbox handle. */
export function viewProcessSandboxHandle(input: unknown): ProcessSandboxHandle {
  return parseWith(processSandboxHandleSchema, input, 'ProcessSandboxHandle') as ProcessSandboxHandle;
}
