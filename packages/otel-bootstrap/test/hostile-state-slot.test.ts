// A telemetry-state slot that refuses every write (someone defined it read-only and
// non-configurable). Publishing then fails after the providers were registered: setup must
// still resolve, say so once, and take back what it registered. Its own file, because the slot
// cannot be repaired afterwards (jest gives every test file its own global object).

import { afterAll, describe, expect, it } from '@jest/globals';
import { initTelemetry, shutdownTelemetry } from '../src/index.js';
import { isGloballyRegistered } from '../src/otel-globals.js';
import { captureConsole } from './helpers/console-capture.js';

const printed = captureConsole();

afterAll(async () => {
  await shutdownTelemetry();
  printed.restore();
});

describe('a telemetry-state slot that refuses writes', () => {
  it('initTelemetry resolves null with one warning and leaves nothing registered or listening', async () => {
    Object.defineProperty(globalThis, Symbol.for('@gym/telemetry-state.v1'), {
      value: undefined,
      writable: false,
      configurable: false,
    });
    const warnings: string[] = [];
    const handle = await initTelemetry({
      serverName: 'stuck',
      serverType: 'resources_servers',
      env: { NEMO_GYM_OTEL_ENABLED: '1', NEMO_GYM_OTEL_EXPORTER: 'console', NEMO_GYM_OTEL_OBSERVER: '0' },
      onWarning: (message) => warnings.push(message),
    });
    expect(handle).toBeNull();
    expect(warnings).toEqual([
      expect.stringMatching(/^@gym\/otel-bootstrap: telemetry is disabled: setup failed \(TypeError/),
    ]);
    expect(isGloballyRegistered('metrics')).toBe(false);
    expect(isGloballyRegistered('trace')).toBe(false);
    expect(isGloballyRegistered('context')).toBe(false);
    expect(isGloballyRegistered('propagation')).toBe(false);
    await expect(shutdownTelemetry()).resolves.toBeUndefined();
  });
});
