// The request and allocation records, and the writer of typed input → span attributes, checked
// by plain code where it is written. As in OpenTelemetry itself, telemetry input never throws: a
// field this package does not know (a typo such as `memoryMB`) is ignored and reported once, and
// a value that breaks its rule is dropped with one diag warning. An absent or dropped amount is
// named under `…unspecified`, never written as 0. A record is one span, ended at once (a record,
// not a measure of provisioning); whatever goes wrong after the gate is reported once and dropped.

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
import { describeValue } from '@gym/core/internal';
import { type Attributes, context, SpanKind } from '@opentelemetry/api';
import { reporter, sandboxTracer } from './scope.js';
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

/** Typed field, key suffix and rule, in the order the keys are written. */
const AMOUNT_FIELDS = [
  ['cpu', 'cpu', AMOUNT],
  ['memoryMib', 'memory_mib', AMOUNT],
  ['diskGib', 'disk_gib', AMOUNT],
  ['gpu', 'gpu', AMOUNT],
  ['gpuType', 'gpu_type', GPU_TYPE],
] as const satisfies readonly (readonly [keyof SandboxResourceAmounts, string, Rule])[];
const AMOUNT_KEYS = AMOUNT_FIELDS.map(([field]) => field);

/** What {@link recordRequest} returns while nothing is recorded: shared, frozen, empty. */
const NOT_RECORDED: SandboxAttributes = Object.freeze({});
const NOTHING: Promise<undefined> = Promise.resolve(undefined);

/**
 * Records one sandbox request before provisioning (a create that then fails still counts) and
 * returns the attributes every later record of that sandbox carries: a new request id and the
 * caller's `attributes`. While nothing would be exported, a shared empty object.
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
    const requestId = randomUUID();
    const caller = attributes === undefined ? {} : callerAttributes(attributes);
    carried = Object.freeze({ [ATTR_SANDBOX_REQUEST_ID]: requestId, ...caller });
    // Own keys first: the SDK's attribute count limit then drops caller keys first.
    const own = { [ATTR_SANDBOX_REQUEST_ID]: requestId, ...requestedAttributes(spec), ...caller };
    const span = { kind: SpanKind.INTERNAL, attributes: own };
    tracer.startSpan(SPAN_SANDBOX_REQUEST, span, options?.context ?? context.active()).end();
  } catch (error) {
    reporter.warnOnce('request-span', 'writing a gym.sandbox.request span failed; it was dropped', error);
  }
  return carried;
}

/**
 * Asks `provider` what it gave an owned sandbox and records it, parented to `handle.context`
 * (else the active context). Resolves to the allocation when recorded, else `undefined`
 * (nothing exporting: the provider is not even asked). Never rejects.
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
      const span = { kind: SpanKind.INTERNAL, attributes: recordAttributes(attributes, own) };
      tracer.startSpan(SPAN_SANDBOX_ALLOCATION, span, parent).end();
      return allocation;
    } catch (error) {
      reporter.warnOnce('allocation', 'a sandbox allocation could not be told or written; it was dropped', error);
      return undefined;
    }
  })();
}

/**
 * Whether a caller's attribute (or, with `sample`, a provider's sample value) may use `key`:
 * under `nemo.gym.sandbox.`, and not a key this package writes itself. A sample may also write
 * under `…resource.`, except the final flag and the sampler's counters.
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
  return (
    typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))
  );
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
 * The request id (when carried), then `own`, then the rest of `carried`: the SDK's attribute
 * count limit drops caller keys first, and a carried key never replaces one of ours.
 */
export function recordAttributes(carried: SandboxAttributes, own: Attributes): Attributes {
  const attributes: Attributes = {};
  const requestId = carried[ATTR_SANDBOX_REQUEST_ID];
  if (requestId !== undefined) attributes[ATTR_SANDBOX_REQUEST_ID] = requestId;
  Object.assign(attributes, own);
  for (const key of Object.keys(carried)) if (!(key in attributes)) attributes[key] = carried[key];
  return attributes;
}

function writeAmounts(out: Written, amounts: SandboxResourceAmounts, prefix: string, where: string): Written {
  unknownFields(amounts, AMOUNT_KEYS, where);
  const unspecified: string[] = [];
  for (const [field, suffix, rule] of AMOUNT_FIELDS) {
    const value = amounts[field];
    if (value !== undefined && valid(value, rule, `${where}.${field}`)) out[prefix + suffix] = value;
    else unspecified.push(suffix);
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
