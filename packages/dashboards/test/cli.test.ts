// The built CLI, run as a user runs it (`node dist/cli.js`, what `npx @gym/dashboards` starts).

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GENERATED_PATHS, generate } from '@gym/dashboards';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { COLLECTOR_UNIT_SUFFIXES } from '../src/prometheus-names.js';
import { packageFile } from './support/paths.js';

// Child processes (node, tsc, promtool) on a loaded machine: a generous bound, not a speed claim.
jest.setTimeout(120_000);

const CLI = packageFile('dist/cli.js');
const execute = promisify(execFile);

async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    // Run inside the temp dir, so a refusal that regresses into a write never touches the repository.
    const { stdout, stderr } = await execute(process.execPath, [CLI, ...args], { cwd: work });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'gym-dashboards-cli-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('gym-dashboards', () => {
  it('is the package bin, with a node shebang', async () => {
    const manifest = JSON.parse(await readFile(packageFile('package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(manifest.bin).toEqual({ 'gym-dashboards': './dist/cli.js' });
    expect((await readFile(CLI, 'utf8')).startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('writes the three files under --out, creating the folders, and names them', async () => {
    const out = join(work, 'plain', 'nested');
    const result = await cli(['--out', out]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const files = generate();
    for (const path of GENERATED_PATHS) {
      expect(await readFile(join(out, path), 'utf8')).toBe(files[path]);
      expect(result.stdout).toContain(join(out, path));
    }
  });

  it('regenerates with the command the rule files name, run as written in the workspace', async () => {
    const header = generate()['prometheus/gym-alerts.rules.yml'];
    const command = /regenerate with `([^`]+)`/.exec(header)?.[1];
    expect(command).toContain('--out <dir>');
    const out = join(work, 'regenerated');
    // The workspace root: where the package is installed (node_modules/@gym/dashboards).
    const { stderr } = await execute('sh', ['-c', (command ?? '').replace('<dir>', out)], {
      cwd: packageFile('../..'),
    });
    expect(stderr).toBe('');
    for (const path of GENERATED_PATHS) expect(await readFile(join(out, path), 'utf8')).toBe(generate()[path]);
  });

  it('applies --name-suffix collector and <unit>=<suffix>, repeatable', async () => {
    const out = join(work, 'suffixed');
    expect((await cli(['--out', out, '--name-suffix', 'collector', '--quiet'])).code).toBe(0);
    const expected = generate({ nameSuffixes: COLLECTOR_UNIT_SUFFIXES });
    for (const path of GENERATED_PATHS) expect(await readFile(join(out, path), 'utf8')).toBe(expected[path]);
    expect(expected['prometheus/gym-recording.rules.yml']).toContain('rate(process_cpu_time_seconds_total[5m])');

    const custom = join(work, 'custom');
    const result = await cli(['--out', custom, '--name-suffix', 'ms=milliseconds', '--name-suffix', 's=seconds']);
    expect(result.code).toBe(0);
    const rules = await readFile(join(custom, 'prometheus/gym-recording.rules.yml'), 'utf8');
    expect(rules).toContain('gym_verify_duration_ms_milliseconds_bucket');
    expect(rules).toContain('process_cpu_time_seconds_total');
    expect(rules).toContain('ms -> _milliseconds; s -> _seconds');
  });

  it.each([
    ['no --out', [], '--out <dir> is required'],
    ['an empty --out', ['--out', ' '], '--out <dir> is required'],
    ['an unknown option', ['--out', 'x', '--bogus'], "Unknown option '--bogus'"],
    ['a positional', ['--out', 'x', 'extra'], 'extra'],
    ['a bad --name-suffix', ['--out', 'x', '--name-suffix', 'h=hours'], '"h=hours" is not valid'],
    ['a --out without its value', ['--out'], "'--out <value>' argument missing"],
    ['--out given twice', ['--out', 'x', '--out', 'y'], '--out <dir> was given more than once'],
    [
      'two suffixes for one unit',
      ['--out', 'x', '--name-suffix', 'collector', '--name-suffix', 'ms=msec'],
      '"ms=msec" conflicts with',
    ],
    ['a Prometheus type suffix', ['--out', 'x', '--name-suffix', '1=total'], '"1=total" is not valid'],
  ])('refuses %s with exit status 2 and says why', async (_what, args, message) => {
    const result = await cli(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });

  it('exits 1 naming the folder when it cannot write there', async () => {
    const file = join(work, 'a-file');
    await writeFile(file, 'not a folder');
    const result = await cli(['--out', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`could not write to ${file}`);
  });

  it('prints help', async () => {
    const result = await cli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--name-suffix');
    expect(result.stdout).toContain('grafana/gym-telemetry.json');
  });
});
