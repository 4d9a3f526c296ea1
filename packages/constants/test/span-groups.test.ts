import { resolveSpanGroups, SPAN_GROUP_PRESETS, SPAN_GROUPS, type SpanGroup } from '@gym/constants';
import { describe, expect, it } from '@jest/globals';

const sorted = (groups: ReadonlySet<SpanGroup>) => [...groups].sort();

describe('resolveSpanGroups', () => {
  it('default is exactly the spine plus job and startup, as in Gym', () => {
    const { groups, unknown } = resolveSpanGroups('default');
    expect(sorted(groups)).toEqual(['http_client', 'job', 'rollout', 'server', 'startup']);
    expect(unknown).toEqual([]);
  });

  it('per_rollout has the fine groups and not job', () => {
    const { groups } = resolveSpanGroups('per_rollout');
    expect(sorted(groups)).toEqual(['agent', 'http_client', 'model_call', 'rollout', 'server', 'verify']);
    expect(groups.has('job')).toBe(false);
  });

  it('all is every group', () => {
    expect(sorted(resolveSpanGroups('all').groups)).toEqual([...SPAN_GROUPS].sort());
  });

  it.each(Object.keys(SPAN_GROUP_PRESETS))('preset %s contains the spine', (preset) => {
    const { groups } = resolveSpanGroups(preset);
    for (const group of ['server', 'http_client', 'rollout'] as const) expect(groups.has(group)).toBe(true);
  });

  it('single names and comma lists', () => {
    expect(sorted(resolveSpanGroups('sandbox').groups)).toEqual(['sandbox']);
    expect(sorted(resolveSpanGroups('verify,agent').groups)).toEqual(['agent', 'verify']);
  });

  it('a preset plus a name is the union', () => {
    expect(sorted(resolveSpanGroups('default,sandbox').groups)).toEqual([
      'http_client',
      'job',
      'rollout',
      'sandbox',
      'server',
      'startup',
    ]);
  });

  it('case and spaces do not matter', () => {
    expect(sorted(resolveSpanGroups('  Default , SANDBOX ').groups)).toEqual(
      sorted(resolveSpanGroups('default,sandbox').groups),
    );
    expect(sorted(resolveSpanGroups(' Per_Rollout ').groups)).toEqual(sorted(resolveSpanGroups('per_rollout').groups));
  });

  it('unknown names are returned separately, never thrown, and the rest still resolves', () => {
    const { groups, unknown } = resolveSpanGroups('rollouts, verify, Bogus, rollouts');
    expect(sorted(groups)).toEqual(['verify']);
    expect(unknown).toEqual(['rollouts', 'bogus']);
  });

  it.each(['', ' , ', ',,,', '   '])('empty spec %j gives the empty set', (spec) => {
    const { groups, unknown } = resolveSpanGroups(spec);
    expect(groups.size).toBe(0);
    expect(unknown).toEqual([]);
  });

  it('returns a fresh set each call (callers may keep it)', () => {
    const a = resolveSpanGroups('default').groups;
    const b = resolveSpanGroups('default').groups;
    expect(a).not.toBe(b);
  });
});

describe('resolveSpanGroups on a huge spec', () => {
  it('keeps each unknown name once and stays linear (100,000 distinct unknown names)', () => {
    const names = Array.from({ length: 100_000 }, (_, i) => `n${i}`);
    const spec = [...names, 'sandbox', 'n1', 'N2'].join(',');
    const { groups, unknown } = resolveSpanGroups(spec);
    expect([...groups]).toEqual(['sandbox']);
    expect(unknown).toHaveLength(100_000);
    expect(unknown[0]).toBe('n0');
  });
});
