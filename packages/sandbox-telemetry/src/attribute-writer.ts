// Typed input → span attributes, checked by plain code where it is written. Telemetry input
// never throws, as in OpenTelemetry itself: a field this package does not know (a typo such as
// `memoryMB`) is ignored and reported once, and a value that breaks its rule is dropped with
// one diag warning. A number appears only when somebody stated it: 0 stays 0, and an absent
// or dropped amount is named under `…unspecified`, never written as 0. The keys depend only on
// the typed data, never on which provider produced it.

import {
  ATTR_SANDBOX_ID,
  ATTR_SANDBOX_REQUEST_ID,
  SANDBOX_ALLOCATION_PREFIX,
  SANDBOX_ATTRIBUTE_PREFIX,
  SANDBOX_PROVIDER_PATTERN,
  SANDBOX_REQUESTED_PREFIX,
  SANDBOX_RESOURCE_PREFIX,
} from '@gym/constants';
import { describeValue } from '@gym/core/internal';
import type { Attributes } from '@opentelemetry/api';
import { reporter } from './scope.js';
import type {
  ResourceAllocation,
  ResourceDesignator,
  SandboxAttributes,
  SandboxAttributeValue,
  SandboxResourceAmounts,
  SandboxSpec,
} from './types.js';

type Written = Record<string, SandboxAttributeValue>;

/** Typed field → key suffix, in the order the keys are written. */
const AMOUNT_FIELDS = [
  ['cpu', 'cpu'],
  ['memoryMib', 'memory_mib'],
  ['diskGib', 'disk_gib'],
  ['gpu', 'gpu'],
  ['gpuType', 'gpu_type'],
] as const satisfies readonly (readonly [keyof SandboxResourceAmounts, string])[];

const AMOUNT_KEYS: ReadonlySet<string> = new Set(AMOUNT_FIELDS.map(([field]) => field));
const DESIGNATOR_KEYS: ReadonlySet<string> = new Set(['kind', 'id', 'scope']);
const ALLOCATION_KEYS: ReadonlySet<string> = new Set(['source', 'components', 'designator', 'host']);
const COMPONENT_KEYS: ReadonlySet<string> = new Set(['name', 'requests', 'limits']);

/** A value that starts like `scheme://` is an endpoint, not an identity. */
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
/** Names that become part of a key (component names) or a bounded value (sources, kinds): the provider-name rule. */
const NAME_RULE = `a name matching ${SANDBOX_PROVIDER_PATTERN}`;
const AMOUNT_RULE = 'a finite number >= 0';
const IDENTITY_RULE = 'an identity of 1 to 256 characters, not an endpoint';

/** The key families this package writes itself; a caller may not set them. */
const RESERVED_PREFIXES = [SANDBOX_REQUESTED_PREFIX, SANDBOX_ALLOCATION_PREFIX, SANDBOX_RESOURCE_PREFIX] as const;

/** True for a value this package writes: a string, a boolean or a finite number. */
export function isAttributeValue(value: unknown): value is SandboxAttributeValue {
  return (
    typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))
  );
}

/** True when `key` belongs to a family this package writes itself (requested, allocation, resource, the ids). */
export function isReservedKey(key: string): boolean {
  if (key === ATTR_SANDBOX_ID || key === ATTR_SANDBOX_REQUEST_ID) return true;
  return RESERVED_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/** `amounts` under `nemo.gym.sandbox.requested.` (see {@link allocationAttributes} for the amount rules). */
export function requestedAttributes(spec: SandboxSpec): Record<string, string | number> {
  return writeAmounts({}, spec.resources, SANDBOX_REQUESTED_PREFIX, 'SandboxSpec.resources') as Record<
    string,
    string | number
  >;
}

/**
 * The attributes of an allocation: `…allocation.source`; `…allocation.designator.kind|id|scope`
 * and `…allocation.host.kind|id|scope` when present; `…allocation.components` = the component
 * names, sorted and comma-joined (`''` when there are none); and per component
 * `…allocation.component.<name>.requests.<resource>` and `….limits.<resource>`, where a
 * resource is `cpu`, `memory_mib`, `disk_gib`, `gpu` or `gpu_type`, written only when stated
 * (0 stays 0), and `….unspecified` lists the others, sorted and comma-joined. A bad value is
 * dropped (one diag warning) and counts as unspecified; a component whose name is not a
 * bounded name, or repeats one, is dropped whole; an unknown field is reported once.
 */
export function allocationAttributes(allocation: ResourceAllocation): Record<string, string | number> {
  const out: Written = {};
  const where = 'ResourceAllocation';
  unknownFields(allocation, ALLOCATION_KEYS, where);
  if (isName(allocation.source)) out[`${SANDBOX_ALLOCATION_PREFIX}source`] = allocation.source;
  else dropped(`${where}.source`, allocation.source, NAME_RULE);
  if (allocation.designator !== undefined) {
    writeDesignator(out, allocation.designator, `${SANDBOX_ALLOCATION_PREFIX}designator.`, `${where}.designator`);
  }
  if (allocation.host !== undefined) {
    writeDesignator(out, allocation.host, `${SANDBOX_ALLOCATION_PREFIX}host.`, `${where}.host`);
  }
  const byName = new Map<string, ResourceAllocation['components'][number]>();
  for (const component of allocation.components) {
    unknownFields(component, COMPONENT_KEYS, `${where}.components[]`);
    if (!isName(component.name) || byName.has(component.name)) {
      dropped(`${where}.components[].name`, component.name, `${NAME_RULE}, unique within the allocation`);
    } else {
      byName.set(component.name, component);
    }
  }
  // Sorted, so two providers that list the same components in another order agree.
  const names = [...byName.keys()].sort();
  out[`${SANDBOX_ALLOCATION_PREFIX}components`] = names.join(',');
  for (const name of names) {
    const component = byName.get(name)!;
    const base = `${SANDBOX_ALLOCATION_PREFIX}component.${name}.`;
    writeAmounts(out, component.requests, `${base}requests.`, `${where}.components[].requests`);
    writeAmounts(out, component.limits, `${base}limits.`, `${where}.components[].limits`);
  }
  return out as Record<string, string | number>;
}

/**
 * The caller's attributes that may go on a record: keys under `nemo.gym.sandbox.` that this
 * package does not write itself, with string, boolean or finite number values. Anything else
 * is left out, with one warning per kind.
 */
export function callerAttributes(attributes: SandboxAttributes, where: string): Written {
  const out: Written = {};
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (!key.startsWith(SANDBOX_ATTRIBUTE_PREFIX) || isReservedKey(key)) {
      reporter.warnOnce(
        `caller-key:${where}`,
        () =>
          `${where}: key ${describeValue(key)} is not one a caller may set (a key under '${SANDBOX_ATTRIBUTE_PREFIX}' ` +
          'that this package does not write itself); it was left out (later ones are left out silently)',
      );
    } else if (isAttributeValue(value)) {
      out[key] = value;
    } else {
      dropped(`${where}.${key}`, value, 'a string, a boolean or a finite number');
    }
  }
  return out;
}

/**
 * The attributes of one record: the request id (when carried), then `own` (this package's
 * keys), then the rest of `carried`. Own keys first, so the SDK's attribute count limit drops
 * caller keys first, and a carried key never replaces one of ours.
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
  for (const [field, suffix] of AMOUNT_FIELDS) {
    const value = amounts[field];
    if (value === undefined) {
      unspecified.push(suffix);
    } else if (field === 'gpuType' ? isText(value, 128) : isAmount(value)) {
      out[prefix + suffix] = value;
    } else {
      dropped(`${where}.${field}`, value, field === 'gpuType' ? 'a string of 1 to 128 characters' : AMOUNT_RULE);
      unspecified.push(suffix);
    }
  }
  if (unspecified.length > 0) out[`${prefix}unspecified`] = unspecified.sort().join(',');
  return out;
}

function writeDesignator(out: Written, designator: ResourceDesignator, prefix: string, where: string): void {
  unknownFields(designator, DESIGNATOR_KEYS, where);
  if (isName(designator.kind)) out[`${prefix}kind`] = designator.kind;
  else dropped(`${where}.kind`, designator.kind, NAME_RULE);
  if (isIdentity(designator.id)) out[`${prefix}id`] = designator.id;
  else dropped(`${where}.id`, designator.id, IDENTITY_RULE);
  if (designator.scope === undefined) return;
  if (isIdentity(designator.scope)) out[`${prefix}scope`] = designator.scope;
  else dropped(`${where}.scope`, designator.scope, IDENTITY_RULE);
}

function isAmount(value: unknown): value is number {
  return typeof value === 'number' && value >= 0 && value !== Number.POSITIVE_INFINITY;
}

function isText(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= max;
}

function isIdentity(value: unknown): value is string {
  return isText(value, 256) && !URL_LIKE.test(value);
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && SANDBOX_PROVIDER_PATTERN.test(value);
}

/** One warning per field: a value was dropped. */
function dropped(field: string, value: unknown, rule: string): void {
  reporter.warnOnce(
    `dropped:${field}`,
    () => `${field} = ${describeValue(value)} is not ${rule}; it was dropped (later ones are dropped silently)`,
  );
}

/** One warning per unknown field name: a typo such as `memoryMB` would otherwise pass unseen. */
function unknownFields(input: object, known: ReadonlySet<string>, where: string): void {
  for (const key of Object.keys(input)) {
    if (known.has(key)) continue;
    reporter.warnOnce(
      `unknown:${where}.${key}`,
      () => `${where} has no field ${describeValue(key)} (known: ${[...known].join(', ')}); it was ignored`,
    );
  }
}
