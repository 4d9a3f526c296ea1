// The demo's `--prometheus` module against the Prometheus installed here: it starts on
// loopback with the @gym/dashboards rules and an empty file_sd file, stops cleanly (twice is fine),
// and reports a missing or failing binary instead of hanging.

import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { generate } from '@gym/dashboards';
import { requireTools } from '@gym/test-kit';
import { describe, expect, it } from '@jest/globals';
import { findPrometheus, freePort, startDemoPrometheus, startLocalPrometheus } from '../src/local-prometheus.js';

const tools = requireTools('prometheus');

async function rules(url: string): Promise<{ name: string; rules: { name: string; health: string }[] }[]> {
  const response = await fetch(`${url}/api/v1/rules`);
  const json = (await response.json()) as {
    data: { groups: { name: string; rules: { name: string; health: string }[] }[] };
  };
  return json.data.groups;
}

describe('startLocalPrometheus', () => {
  tools.it(
    'starts Prometheus on 127.0.0.1 with both rule groups loaded, and stops it',
    async () => {
      const local = await startLocalPrometheus();
      if (local === undefined) throw new Error('prometheus is not on PATH');
      try {
        expect(local.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(JSON.parse(await readFile(local.targetsFile, 'utf8'))).toEqual([]);
        const groups = await rules(local.url);
        expect(groups.map((group) => group.name).sort()).toEqual(['gym-telemetry.alerts', 'gym-telemetry.recording']);
        // Every rule the package generates, loaded.
        const generated =
          Object.values(generate())
            .join('\n')
            .match(/^ {6}- (?:record|alert): /gm) ?? [];
        expect(generated.length).toBeGreaterThan(30);
        expect(groups.flatMap((group) => group.rules)).toHaveLength(generated.length);
        for (const file of local.ruleFiles) expect(existsSync(file)).toBe(true);
      } finally {
        await local.stop();
        await local.stop();
      }
      await expect(fetch(`${local.url}/-/ready`)).rejects.toThrow();
      for (const file of local.ruleFiles) expect(existsSync(file)).toBe(false);
    },
    90_000,
  );

  tools.it(
    'tries another port when another process took the one it found',
    async () => {
      // The port found free is taken before Prometheus binds it (another process was quicker).
      // Its connections are dropped at once, so closing it does not wait for them.
      const taken = createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const address = taken.address();
      const busy = typeof address === 'object' && address !== null ? address.port : 0;
      const picked: number[] = [];
      try {
        const local = await startLocalPrometheus({
          pickPort: async () => {
            const port = picked.length === 0 ? busy : await freePort();
            picked.push(port);
            return port;
          },
        });
        try {
          expect(picked).toHaveLength(2);
          expect(local?.url).toBe(`http://127.0.0.1:${picked[1]}`);
          expect((await fetch(`${local?.url}/-/ready`)).ok).toBe(true);
        } finally {
          await local?.stop();
        }
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    },
    90_000,
  );

  it('resolves undefined when the binary does not exist', async () => {
    expect(await findPrometheus('/nonexistent/prometheus')).toBeUndefined();
    expect(await startLocalPrometheus({ binary: '/nonexistent/prometheus' })).toBeUndefined();
  });

  it('rejects, naming the exit, when the binary exits at once', async () => {
    await expect(startLocalPrometheus({ binary: '/bin/false' })).rejects.toThrow(/Prometheus exited \(code 1\)/);
  });
});

describe('startDemoPrometheus', () => {
  it('says why and starts nothing when the fleet exports OTLP', async () => {
    const lines: string[] = [];
    const started = await startDemoPrometheus({
      scrapeable: false,
      linger: 0,
      out: (line) => lines.push(`out ${line}`),
      err: (line) => lines.push(`err ${line}`),
    });
    expect(started).toBeUndefined();
    expect(lines).toEqual([expect.stringMatching(/^err --prometheus: the fleet exports OTLP/)]);
  });

  tools.it(
    'prints the URL, and how to keep it up',
    async () => {
      const lines: string[] = [];
      const started = await startDemoPrometheus({
        scrapeable: true,
        linger: 0,
        out: (line) => lines.push(line),
        err: (line) => lines.push(`err ${line}`),
      });
      try {
        expect(started).toBeDefined();
        expect(lines[0]).toContain(`Prometheus    ${started?.url}`);
        expect(lines.join('\n')).toContain('--linger');
      } finally {
        await started?.stop();
      }
    },
    90_000,
  );
});

it('findPrometheus honours PATH and tries no fixed folder (not even /usr/bin)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gym-find-prometheus-'));
  const empty = mkdtempSync(join(tmpdir(), 'gym-find-prometheus-empty-'));
  const fake = join(dir, 'prometheus');
  writeFileSync(fake, '#!/bin/sh\nexit 0\n');
  chmodSync(fake, 0o755);
  const saved = process.env.PATH;
  try {
    process.env.PATH = empty;
    expect(await findPrometheus()).toBeUndefined();
    process.env.PATH = [empty, dir].join(delimiter);
    expect(await findPrometheus()).toBe(fake);
  } finally {
    process.env.PATH = saved;
    rmSync(dir, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  }
});
