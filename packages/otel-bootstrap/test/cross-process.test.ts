// The environment is the only channel between the orchestrator and its servers. Here the
// test is the orchestrator: it calls configureTelemetryEnv, spawns two real server
// processes (plain `node` on the built package) and receives their OTLP exports.

import { decodeOtlpMetrics, decodeOtlpTraces } from '@gym/test-kit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { configureTelemetryEnv } from '../src/index.js';
import { cleanEnv, fixture, requireBuild, runNode } from './helpers/child-node.js';
import { type OtlpReceiver, startOtlpReceiver } from './helpers/otlp-receiver.js';

let receiver: OtlpReceiver;

beforeAll(async () => {
  requireBuild();
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

describe('a fleet configured by configureTelemetryEnv', () => {
  it('two server processes export with the same nemo.run.id and their own service names', async () => {
    const env = cleanEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    const runId = configureTelemetryEnv({ enabled: true, exporter: 'otlp' }, env);
    expect(runId).toMatch(/^[0-9a-f]{12}$/);

    const [a, b] = await Promise.all([
      runNode([fixture('server-process.mjs'), 'server_a'], env),
      runNode([fixture('server-process.mjs'), 'server_b'], env),
    ]);
    for (const [child, name] of [
      [a, 'server_a'],
      [b, 'server_b'],
    ] as const) {
      expect({ code: child.code, stderr: child.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(child.stdout)).toEqual({
        serviceName: `nemo-gym/${name}`,
        runId,
        metricsExporting: true,
        tracesExporting: true,
      });
    }

    for (const [path, kind, name] of [
      ['/v1/metrics', 'metrics', 'gym.rollout.duration_ms'],
      ['/v1/traces', 'traces', 'gym.rollout'],
    ] as const) {
      const requests = receiver.requests.filter((request) => request.path === path);
      expect(requests).toHaveLength(2);
      for (const request of requests) expect(request.body.includes(Buffer.from(runId as string))).toBe(true);
      const blocks = requests.flatMap((request) => {
        const decoded = kind === 'metrics' ? decodeOtlpMetrics(request.body) : decodeOtlpTraces(request.body);
        return decoded.map((block) => ({
          attributes: block.resource,
          names: block.scopes.flatMap((scope) => scope.items.map((item) => item.name)),
        }));
      });
      expect(blocks.map((block) => block.attributes['service.name']).sort()).toEqual([
        'nemo-gym/server_a',
        'nemo-gym/server_b',
      ]);
      for (const block of blocks) {
        expect(block.names).toContain(name); // metrics also carry the observer's series
        expect(block.attributes).toMatchObject({
          'nemo.gym.service_group': 'nemo-gym',
          'nemo.gym.server.type': 'resources_servers',
          'nemo.gym.server.name': (block.attributes['service.name'] as string).split('/')[1],
          'nemo.run.id': runId,
        });
      }
    }
  });
});
