// Typed amounts and allocations → span attributes. Pure functions with one rule above all:
// a number appears only when somebody stated it (in an own property: a value inherited from a
// polluted prototype was stated by nobody). 0 stays 0 (a sandbox given no GPU), an
// absent field is never 0 but is named under `…unspecified`, so "unknown" is queryable.
// The keys depend only on the typed data, never on which provider produced it.

import { SANDBOX_ATTRIBUTE_PREFIX } from '@gym/constants';
import { ALLOCATION_PREFIX, REQUESTED_PREFIX } from './attribute-keys.js';
import { SandboxInputError } from './input-error.js';
import { parseResourceAllocation, parseSandboxResourceAmounts, parseSandboxSpec } from './schemas.js';
import type { ResourceAllocation, ResourceDesignator, SandboxResourceAmounts, SandboxSpec } from './types.js';

/** Typed field → key suffix, in the order the keys are written. */
const AMOUNT_FIELDS = [
  ['cpu', 'cpu'],
  ['memoryMib', 'memory_mib'],
  ['diskGib', 'disk_gib'],
  ['gpu', 'gpu'],
  ['gpuType', 'gpu_type'],
] as const satisfies readonly (readonly [keyof SandboxResourceAmounts, string])[];

/** Key suffix listing the absent fields. */
const UNSPECIFIED = 'unspecified';

/**
 * Attributes of known amounts under `prefix`: `prefix + cpu | memory_mib | disk_gib | gpu |
 * gpu_type` for each field that is present (0 stays 0), and `prefix + unspecified` = the
 * sorted, comma-joined suffixes of the absent fields (omitted when none is absent).
 *
 * @param amounts validated first; bad input throws {@link SandboxInputError}.
 * @param prefix must start with `nemo.gym.sandbox.` and end with `.`.
 */
export function amountAttributes(amounts: SandboxResourceAmounts, prefix: string): Record<string, string | number> {
  checkPrefix(prefix);
  return writeAmounts({}, parseSandboxResourceAmounts(amounts), prefix);
}

/** `amountAttributes(spec.resources, 'nemo.gym.sandbox.requested.')`; the spec is validated first. */
export function requestedAttributes(spec: SandboxSpec): Record<string, string | number> {
  return writeAmounts({}, parseSandboxSpec(spec).resources, REQUESTED_PREFIX);
}

/**
 * Attributes of an allocation: `…allocation.source`; `…allocation.designator.kind|id|scope`
 * and `…allocation.host.kind|id|scope` when present; `…allocation.components` = the
 * component names, sorted and comma-joined (`''` when there are none); and per component
 * `…allocation.component.<name>.requests.*` and `….limits.*` as {@link amountAttributes}
 * writes them. Validated first; bad input throws {@link SandboxInputError}.
 */
export function allocationAttributes(allocation: ResourceAllocation): Record<string, string | number> {
  return writeAllocation(parseResourceAllocation(allocation));
}

/** {@link allocationAttributes} for an allocation that is already validated. */
export function writeAllocation(allocation: ResourceAllocation): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  out[`${ALLOCATION_PREFIX}source`] = allocation.source;
  const designator = own(allocation, 'designator');
  if (designator !== undefined) writeDesignator(out, designator, `${ALLOCATION_PREFIX}designator.`);
  const host = own(allocation, 'host');
  if (host !== undefined) writeDesignator(out, host, `${ALLOCATION_PREFIX}host.`);
  // Sorted, so two providers that list the same components in another order agree.
  const components = [...allocation.components].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  out[`${ALLOCATION_PREFIX}components`] = components.map((component) => component.name).join(',');
  for (const component of components) {
    const base = `${ALLOCATION_PREFIX}component.${component.name}.`;
    writeAmounts(out, component.requests, `${base}requests.`);
    writeAmounts(out, component.limits, `${base}limits.`);
  }
  return out;
}

/** Writes validated amounts into `out` under `prefix`; returns `out`. */
export function writeAmounts(
  out: Record<string, string | number>,
  amounts: SandboxResourceAmounts,
  prefix: string,
): Record<string, string | number> {
  const absent: string[] = [];
  for (const [field, suffix] of AMOUNT_FIELDS) {
    const value = own(amounts, field);
    if (value === undefined) absent.push(suffix);
    else out[prefix + suffix] = value;
  }
  if (absent.length > 0) out[prefix + UNSPECIFIED] = absent.sort().join(',');
  return out;
}

function writeDesignator(out: Record<string, string | number>, designator: ResourceDesignator, prefix: string): void {
  out[`${prefix}kind`] = designator.kind;
  out[`${prefix}id`] = designator.id;
  const scope = own(designator, 'scope');
  if (scope !== undefined) out[`${prefix}scope`] = scope;
}

/** `object[key]` when it is an own property, else `undefined` (never a value from a prototype). */
function own<T extends object, K extends keyof T>(object: T, key: K): T[K] | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

function checkPrefix(prefix: unknown): void {
  if (typeof prefix !== 'string' || !prefix.startsWith(SANDBOX_ATTRIBUTE_PREFIX) || !prefix.endsWith('.')) {
    throw new SandboxInputError('attribute prefix', [
      { path: 'prefix', value: prefix, rule: `must start with '${SANDBOX_ATTRIBUTE_PREFIX}' and end with '.'` },
    ]);
  }
}
