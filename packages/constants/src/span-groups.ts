// Span groups switch families of spans on and off. Resolving a spec is pure and never
// throws: unknown names are handed back so the caller can report them once and go on
// (a typo in an env var must not stop a server).

/** Every span group, in spec order. */
export const SPAN_GROUPS = [
  'job',
  'server',
  'http_client',
  'rollout',
  'verify',
  'agent',
  'model_call',
  'sandbox',
  'startup',
] as const;
export type SpanGroup = (typeof SPAN_GROUPS)[number];

/** Named presets a spec may use besides single group names. */
export const SPAN_GROUP_PRESETS = {
  /** The cheap spine: one span per job, server request, outgoing call and rollout, and the startup spans (once per run). */
  default: ['job', 'server', 'http_client', 'rollout', 'startup'],
  /** Everything inside a rollout, without the job and startup spans. */
  per_rollout: ['server', 'http_client', 'rollout', 'verify', 'agent', 'model_call'],
  all: SPAN_GROUPS,
} as const satisfies Record<string, readonly SpanGroup[]>;

/** The spec used when none is given. */
export const DEFAULT_SPAN_GROUP_SPEC = 'default' as const;

interface ResolvedSpanGroups {
  readonly groups: ReadonlySet<SpanGroup>;
  /** Names that are neither a group nor a preset, lower-cased and trimmed, in spec order, without repeats. */
  readonly unknown: readonly string[];
}

const spanGroupSet: ReadonlySet<unknown> = new Set(SPAN_GROUPS);

/** Whether `value` is exactly a span group name (not a preset, nothing that merely converts to one). */
export function isSpanGroup(value: unknown): value is SpanGroup {
  return spanGroupSet.has(value);
}

/**
 * Resolves a comma list of presets and group names (`"default,sandbox"`, `" Verify , AGENT "`)
 * into a set of groups. Case and spaces do not matter; empty items are skipped, so `""` and
 * `" , "` give the empty set. Unknown names are returned in `unknown`, never thrown.
 */
export function resolveSpanGroups(spec: string): ResolvedSpanGroups {
  const groups = new Set<SpanGroup>();
  const unknown = new Set<string>();
  for (const raw of spec.split(',')) {
    const name = raw.trim().toLowerCase();
    if (name === '') continue;
    if (Object.hasOwn(SPAN_GROUP_PRESETS, name)) {
      for (const group of SPAN_GROUP_PRESETS[name as keyof typeof SPAN_GROUP_PRESETS]) groups.add(group);
    } else if (spanGroupSet.has(name)) {
      groups.add(name as SpanGroup);
    } else {
      unknown.add(name);
    }
  }
  return { groups, unknown: [...unknown] };
}
