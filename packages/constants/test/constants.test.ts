import * as constants from '@gym/constants';
import {
  ATTR_EXECUTOR,
  ATTR_OPERATION,
  ATTR_OPERATION_OUTCOME,
  ATTR_RUN_ID,
  ATTR_SANDBOX_PREFIX,
  ATTR_SERVER_NAME,
  ATTR_SERVER_TYPE,
  ATTR_SERVICE_GROUP,
  ATTR_VERSION,
  COMPONENTS,
  EXECUTORS,
  INSTRUMENTS,
  isComponent,
  isExecutor,
  isOperation,
  isOutcome,
  isServerType,
  isSpanGroup,
  OPERATIONS,
  OUTCOMES,
  SERVER_TYPES,
  SPAN_GROUPS,
} from '@gym/constants';
import { describe, expect, it } from '@jest/globals';

describe('bounded sets equal the contract exactly', () => {
  it.each([
    ['OPERATIONS', OPERATIONS, ['verify', 'tool', 'judge', 'other']],
    ['EXECUTORS', EXECUTORS, ['inline', 'thread', 'process', 'subprocess', 'other']],
    ['OUTCOMES', OUTCOMES, ['ok', 'error', 'timeout', 'cancelled', 'crashed']],
    [
      'SERVER_TYPES',
      SERVER_TYPES,
      ['resources_servers', 'responses_api_agents', 'responses_api_models', 'orchestrator'],
    ],
    [
      'SPAN_GROUPS',
      SPAN_GROUPS,
      ['job', 'server', 'http_client', 'rollout', 'verify', 'agent', 'model_call', 'sandbox', 'startup'],
    ],
  ])('%s', (_name, actual, expected) => {
    expect([...actual]).toEqual(expected);
  });

  it.each([
    ['isOperation', isOperation, OPERATIONS],
    ['isExecutor', isExecutor, EXECUTORS],
    ['isOutcome', isOutcome, OUTCOMES],
    ['isServerType', isServerType, SERVER_TYPES],
    ['isComponent', isComponent, COMPONENTS],
    ['isSpanGroup', isSpanGroup, SPAN_GROUPS],
  ] as const)('%s accepts every member and nothing else', (_name, guard, members) => {
    for (const member of members) expect(guard(member)).toBe(true);
    for (const other of ['', 'VERIFY', ' ok', 'toString', '__proto__', 1, null, undefined, {}, ['ok']]) {
      expect(guard(other)).toBe(false);
    }
  });
});

describe('histogram boundaries', () => {
  it.each([
    [
      'INSTRUMENTS.operationDuration.boundaries',
      INSTRUMENTS.operationDuration.boundaries,
      [1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000, 300000, 1800000],
    ],
    [
      'INSTRUMENTS.verifyDuration.boundaries',
      INSTRUMENTS.verifyDuration.boundaries,
      [100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1200000, 1800000, 3600000],
    ],
    [
      'INSTRUMENTS.sandboxStartupDuration.boundaries',
      INSTRUMENTS.sandboxStartupDuration.boundaries,
      [250, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000],
    ],
  ])('%s equals the spec and is strictly increasing', (_name, actual, expected) => {
    expect([...actual]).toEqual(expected);
    for (let i = 1; i < actual.length; i++) expect(actual[i]).toBeGreaterThan(actual[i - 1] as number);
  });
});

describe('names and keys', () => {
  it("the instrument names of Gym's lens; request_duration is declared and never created", () => {
    expect(
      Object.values(INSTRUMENTS)
        .map((entry) => entry.name)
        .slice(0, 8),
    ).toEqual([
      'gym.resources.operation.queue_duration_ms',
      'gym.resources.operation.duration_ms',
      'gym.resources.operation.queued',
      'gym.resources.operation.active',
      'gym.rollout.duration_ms',
      'gym.verify.duration_ms',
      'gym.verify.success_rate',
      'gym.servers.active',
    ]);
    expect(Object.values(INSTRUMENTS).map((entry) => entry.name)).not.toContain('gym.server.request_duration_ms');
  });

  it('metric attribute keys; the executor key is not nested under operation', () => {
    expect(ATTR_OPERATION).toBe('nemo.gym.resources.operation');
    expect(ATTR_EXECUTOR).toBe('nemo.gym.resources.executor');
    expect(ATTR_OPERATION_OUTCOME).toBe('nemo.gym.resources.operation.outcome');
    expect(ATTR_EXECUTOR.startsWith(`${ATTR_OPERATION}.`)).toBe(false);
  });

  it('resource attribute keys', () => {
    expect([ATTR_VERSION, ATTR_SERVER_NAME, ATTR_SERVER_TYPE, ATTR_SERVICE_GROUP, ATTR_RUN_ID]).toEqual([
      'nemo.gym.version',
      'nemo.gym.server.name',
      'nemo.gym.server.type',
      'nemo.gym.service_group',
      'nemo.run.id',
    ]);
  });

  it('the sandbox prefix', () => {
    expect(ATTR_SANDBOX_PREFIX).toBe('nemo.gym.sandbox.');
  });
});

it('every ATTR_* constant is named by its key', () => {
  const nameOf = (key: string) =>
    `ATTR_${key
      .replace(/^nemo\.gym\.resources\.|^nemo\.gym\.|^nemo\./, '')
      .replace(/\.$/, '.prefix')
      .replace(/[.]/g, '_')
      .toUpperCase()}`;
  const misnamed = Object.entries(constants)
    .filter(([name]) => name.startsWith('ATTR_'))
    .filter(([name, key]) => name !== nameOf(key as string));
  expect(misnamed).toEqual([]);
});
