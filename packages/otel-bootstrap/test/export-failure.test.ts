// Export failures reach stderr, once, as a process warning: the SDK reports them only through
// `diag`, which prints nothing unless someone installed a diag logger. A real child process
// exports to a collector that answers 400 to every request, many times over.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { cleanEnv, fixture, requireBuild, runNode } from './helpers/child-node.js';

beforeAll(() => requireBuild());

describe('export failures', () => {
  it('are said once on stderr, however often and on however many signals they happen', async () => {
    let metricExports = 0;
    const collector = createServer((request, response) => {
      if (request.url === '/count') {
        response.end(String(metricExports));
        return;
      }
      if (request.url === '/v1/metrics') metricExports += 1;
      request.resume();
      request.on('end', () => response.writeHead(400).end('rejected'));
    });
    await new Promise<void>((resolve) => collector.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    try {
      const { code, stdout, stderr } = await runNode(
        [fixture('rejected-exports-process.mjs')],
        cleanEnv({
          NEMO_GYM_OTEL_ENABLED: '1',
          OTEL_EXPORTER_OTLP_ENDPOINT: url,
          OTEL_METRIC_EXPORT_INTERVAL: '1000',
          COUNT_URL: `${url}/count`,
          WANTED_EXPORTS: '2',
        }),
      );
      expect({ code, stdout }).toEqual({ code: 0, stdout: 'done' });
      expect(metricExports).toBeGreaterThanOrEqual(2);
      // One line for the periodic failures: not one per export, not one per signal. And one
      // for the final flush at shutdown, which fails too: records are lost, and an earlier
      // failure does not excuse saying so.
      const said = stderr.split('\n').filter((line) => line.includes('GymTelemetryWarning'));
      expect(said).toHaveLength(2);
      expect(said[0]).toMatch(
        /GymTelemetryWarning: @gym\/otel-bootstrap: (metrics|traces) export failed \(.*\); telemetry carries on, and later export failures are not reported again$/,
      );
      expect(said[1]).toMatch(
        /GymTelemetryWarning: @gym\/otel-bootstrap: (metrics|traces) export failed \(.*\) in the final flush at shutdown; what was recorded since the last successful export is lost$/,
      );
    } finally {
      collector.closeAllConnections();
      await new Promise((resolve) => collector.close(resolve));
    }
  });
});
