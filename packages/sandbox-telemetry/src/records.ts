// The package's scope and gate, its records (spans ended at once) and the writer of typed input
// → span attributes. An unknown field (a typo such as `memoryMB`) is ignored and a bad value is
// dropped, each with one diag warning; an absent or dropped amount is `…unspecified`, never 0.

import { randomUUID } from 'node:crypto';
import {
  ATTR_SANDBOX_ALLOCATION_PREFIX,
  ATTR_SANDBOX_ID,
  ATTR_SANDBOX_PREFIX,
  ATTR_SANDBOX_REQUEST_ID,
  ATTR_SANDBOX_REQUESTED_PREFIX,
  ATTR_SANDBOX_RESOURCE_FINAL,
  ATTR_SANDBOX_RESOURCE_PREFIX,
  SANDBOX_PROVIDER_PATTERN,
  SPAN_SANDBOX_ALLOCATION,
  SPAN_SANDBOX_REQUEST,
} from '@gym/constants';
import { currentSpanGroups, isTracesExporting } from '@gym/core';
import { createReporter, describeValue, resolveTracer } from '@gym/core/internal';
import { type Attributes, type Context, context, SpanKind, type Tracer } from '@opentelemetry/api';
import type {
  RecordRequestOptions,
  ResourceAllocation,
  ResourceDesignator,
  ResourceProvider,
  SandboxAttributes,
  SandboxAttributeValue,
  SandboxHandle,
  SandboxResourceAmounts,
  SandboxSpec,
  SandboxTelemetryOptions,
} from './types.js';

export const SCOPE = Object.freeze({ name: '@gym/sandbox-telemetry' });
export const reporter = createReporter(SCOPE.name);

/** Whether the `sandbox` span group is on: it gates the lifecycle metrics and the records alike. */
export function sandboxGroupOn(): boolean {
  return currentSpanGroups().has('sandbox');
}

/** The tracer to record on: an injected provider's, else the global one while traces export and `sandbox` is on. */
export function sandboxTracer(options: SandboxTelemetryOptions | undefined): Tracer | undefined {
  if (options?.tracerProvider == null && (!isTracesExporting() || !sandboxGroupOn())) return undefined;
  return resolveTracer(options, SCOPE, reporter);
}

type Written = Record<string, string | number>;
/** A value's test, and the rule as a warning states it. */
type Rule = readonly [test: (value: unknown) => boolean, text: string];

const text = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length >= 1 && value.length <= max;
// Names become part of a key (components) or a bounded value (sources, kinds).
const NAME: Rule = [
  (v) => typeof v === 'string' && SANDBOX_PROVIDER_PATTERN.test(v),
  `a name matching ${SANDBOX_PROVIDER_PATTERN}`,
];
const AMOUNT: Rule = [(v) => typeof v === 'number' && v >= 0 && v !== Number.POSITIVE_INFINITY, 'a finite number >= 0'];
const GPU_TYPE: Rule = [(v) => text(v, 128), 'a string of 1 to 128 characters'];
// An identity, not an address: a value that starts like `scheme://` is an endpoint.
const IDENTITY: Rule = [
  (v) => text(v, 256) && !/^[a-z][a-z0-9+.-]*:\/\//i.test(v),
  'an identity of 1 to 256 characters, not an endpoint',
];
const VALUE: Rule = [isAttributeValue, 'a string, a boolean or a finite number'];

/** Each amount's key suffix, in the order the keys are written. */
const SUFFIX = { cpu: 'cpu', memoryMib: 'memory_mib', diskGib: 'disk_gib', gpu: 'gpu', gpuType: 'gpu_type' } as const;
const AMOUNT_KEYS = Object.keys(SUFFIX) as (keyof SandboxResourceAmounts)[];

/** What {@link recordRequest} returns while nothing is recorded: shared, frozen, empty. */
const NOT_RECORDED: SandboxAttributes = Object.freeze({});
const NOTHING: Promise<undefined> = Promise.resolve(undefined);

/**
 * Records one sandbox request before provisioning (a create that then fails still counts). Returns
 * what every later record of that sandbox carries (a new request id and the caller's
 * `attributes`), or a shared empty object while nothing would be exported.
 */
export function recordRequest(
  spec: SandboxSpec,
  attributes?: SandboxAttributes,
  options?: RecordRequestOptions,
): SandboxAttributes {
  const tracer = sandboxTracer(options);
  if (tracer === undefined) return NOT_RECORDED;
  let carried = NOT_RECORDED;
  try {
    const caller = attributes === undefined ? {} : callerAttributes(attributes);
    carried = Object.freeze({ [ATTR_SANDBOX_REQUEST_ID]: randomUUID(), ...caller });
    writeRecord(tracer, SPAN_SANDBOX_REQUEST, carried, requestedAttributes(spec), options?.context ?? context.active());
  } catch (error) {
    reporter.warnOnce('request-span', 'writing a gym.sandbox.request span failed; it was dropped', error);
  }
  return carried;
}

/**
 * Asks `provider` what it gave an owned sandbox and records it, parented to `handle.context` (else
 * the active context). Resolves to the allocation when recorded, else `undefined`; never rejects.
 */
export function recordAllocation<H extends SandboxHandle>(
  handle: H,
  provider: ResourceProvider<H>,
  attributes: SandboxAttributes,
  options?: SandboxTelemetryOptions,
): Promise<ResourceAllocation | undefined> {
  const tracer = sandboxTracer(options);
  if (tracer === undefined || !handle.owned || provider.resourceAllocation === undefined) return NOTHING;
  const parent = handle.context ?? context.active();
  return (async () => {
    try {
      const allocation = await provider.resourceAllocation!(handle);
      const own = { [ATTR_SANDBOX_ID]: handle.id, ...allocationAttributes(allocation) };
      writeRecord(tracer, SPAN_SANDBOX_ALLOCATION, attributes, own, parent);
      return allocation;
    } catch (error) {
      reporter.warnOnce('allocation', 'a sandbox allocation could not be told or written; it was dropped', error);
      return undefined;
    }
  })();
}

/**
 * Whether a caller's attribute (or, with `sample`, a sample value) may use `key`: one under
 * `nemo.gym.sandbox.` that this package does not write; a sample may also write `…resource.*`.
 */
export function isFreeKey(key: string, sample: boolean): boolean {
  if (!key.startsWith(ATTR_SANDBOX_PREFIX) || key === ATTR_SANDBOX_ID || key === ATTR_SANDBOX_REQUEST_ID) {
    return false;
  }
  if (key.startsWith(ATTR_SANDBOX_RESOURCE_PREFIX)) {
    return sample && key !== ATTR_SANDBOX_RESOURCE_FINAL && !key.startsWith(`${ATTR_SANDBOX_RESOURCE_PREFIX}sampler.`);
  }
  return !key.startsWith(ATTR_SANDBOX_REQUESTED_PREFIX) && !key.startsWith(ATTR_SANDBOX_ALLOCATION_PREFIX);
}

/** Whether `value` may be written: a string, a boolean or a finite number. */
export function isAttributeValue(value: unknown): value is SandboxAttributeValue {
  return typeof value === 'number' ? Number.isFinite(value) : typeof value === 'string' || typeof value === 'boolean';
}

/** `spec.resources` under `nemo.gym.sandbox.requested.`, by the amount rules of {@link allocationAttributes}. */
export function requestedAttributes(spec: SandboxSpec): Record<string, string | number> {
  return writeAmounts({}, spec.resources, ATTR_SANDBOX_REQUESTED_PREFIX, 'SandboxSpec.resources');
}

/**
 * An allocation under `nemo.gym.sandbox.allocation.`: an amount only when stated (0 stays 0),
 * the others listed under `…unspecified`; a component whose name is bad or repeated is dropped.
 */
export function allocationAttributes(allocation: ResourceAllocation): Record<string, string | number> {
  const out: Written = {};
  const where = 'ResourceAllocation';
  unknownFields(allocation, ['source', 'components', 'designator', 'host'], where);
  if (valid(allocation.source, NAME, `${where}.source`))
    out[`${ATTR_SANDBOX_ALLOCATION_PREFIX}source`] = allocation.source;
  for (const part of ['designator', 'host'] as const) {
    const designator = allocation[part];
    if (designator !== undefined) writeDesignator(out, designator, part, `${where}.${part}`);
  }
  const byName = new Map<string, ResourceAllocation['components'][number]>();
  const unique: Rule = [(v) => NAME[0](v) && !byName.has(v as string), `${NAME[1]}, unique within the allocation`];
  for (const component of allocation.components) {
    unknownFields(component, ['name', 'requests', 'limits'], `${where}.components[]`);
    if (valid(component.name, unique, `${where}.components[].name`)) byName.set(component.name, component);
  }
  // Sorted, so two providers that list the same components in another order agree.
  const names = [...byName.keys()].sort();
  out[`${ATTR_SANDBOX_ALLOCATION_PREFIX}components`] = names.join(',');
  for (const name of names) {
    const component = byName.get(name)!;
    const base = `${ATTR_SANDBOX_ALLOCATION_PREFIX}component.${name}.`;
    writeAmounts(out, component.requests, `${base}requests.`, `${where}.components[].requests`);
    writeAmounts(out, component.limits, `${base}limits.`, `${where}.components[].limits`);
  }
  return out;
}

/** The caller's attributes that may go on a record; the rest is left out, one warning per kind. */
function callerAttributes(attributes: SandboxAttributes): SandboxAttributes {
  const where = 'recordRequest attributes';
  const out: Record<string, SandboxAttributeValue> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (!isFreeKey(key, false)) {
      reporter.warnOnce(
        `caller-key:${where}`,
        () =>
          `${where}: key ${describeValue(key)} is not one a caller may set (a key under '${ATTR_SANDBOX_PREFIX}' ` +
          'that this package does not write itself); it was left out (later ones are left out silently)',
      );
    } else if (valid(value, VALUE, `${where}.${key}`)) {
      out[key] = value;
    }
  }
  return out;
}

/**
 * Writes one record, a span ended at once: the request id, `own`, then the rest of `carried` (the
 * SDK's attribute count limit drops caller keys first; a carried key never replaces one of ours).
 */
export function writeRecord(tracer: Tracer, name: string, carried: SandboxAttributes, own: Attributes, at: Context) {
  const attributes: Attributes = {};
  const requestId = carried[ATTR_SANDBOX_REQUEST_ID];
  if (requestId !== undefined) attributes[ATTR_SANDBOX_REQUEST_ID] = requestId;
  Object.assign(attributes, own);
  for (const key of Object.keys(carried)) if (!(key in attributes)) attributes[key] = carried[key];
  tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, at).end();
}

function writeAmounts(out: Written, amounts: SandboxResourceAmounts, prefix: string, where: string): Written {
  unknownFields(amounts, AMOUNT_KEYS, where);
  const unspecified: string[] = [];
  for (const field of AMOUNT_KEYS) {
    const value = amounts[field];
    const rule = field === 'gpuType' ? GPU_TYPE : AMOUNT;
    if (value !== undefined && valid(value, rule, `${where}.${field}`)) out[prefix + SUFFIX[field]] = value;
    else unspecified.push(SUFFIX[field]);
  }
  if (unspecified.length > 0) out[`${prefix}unspecified`] = unspecified.sort().join(',');
  return out;
}

function writeDesignator(out: Written, designator: ResourceDesignator, part: string, where: string): void {
  unknownFields(designator, ['kind', 'id', 'scope'], where);
  const prefix = `${ATTR_SANDBOX_ALLOCATION_PREFIX}${part}.`;
  if (valid(designator.kind, NAME, `${where}.kind`)) out[`${prefix}kind`] = designator.kind;
  if (valid(designator.id, IDENTITY, `${where}.id`)) out[`${prefix}id`] = designator.id;
  if (designator.scope !== undefined && valid(designator.scope, IDENTITY, `${where}.scope`)) {
    out[`${prefix}scope`] = designator.scope;
  }
}

/** Whether `value` keeps `rule`; when not, it is dropped with one warning per field. */
function valid(value: unknown, [test, rule]: Rule, field: string): boolean {
  if (test(value)) return true;
  reporter.warnOnce(
    `dropped:${field}`,
    () => `${field} = ${describeValue(value)} is not ${rule}; it was dropped (later ones are dropped silently)`,
  );
  return false;
}

/** One warning per unknown field name: a typo such as `memoryMB` would otherwise pass unseen. */
function unknownFields(input: object, known: readonly string[], where: string): void {
  for (const key of Object.keys(input)) {
    if (known.includes(key)) continue;
    reporter.warnOnce(
      `unknown:${where}.${key}`,
      () => `${where} has no field ${describeValue(key)} (known: ${known.join(', ')}); it was ignored`,
    );
  }
}
