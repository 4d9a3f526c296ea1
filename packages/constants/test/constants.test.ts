import * as constants from '@gym/constants';
import {
  ATTR_EXECUTOR,
  ATTR_GYM_VERSION,
  ATTR_OPERATION,
  ATTR_OUTCOME,
  ATTR_RUN_ID,
  ATTR_SERVER_NAME,
  ATTR_SERVER_TYPE,
  ATTR_SERVICE_GROUP,
  COMPONENTS,
  EXECUTORS,
  GYM_DURATION_BOUNDARIES_MS,
  GYM_INSTRUMENTS,
  isComponent,
  isExecutor,
  isOperation,
  isOutcome,
  isServerType,
  isSpanGroup,
  OPERATION_BOUNDARIES_MS,
  OPERATIONS,
  OUTCOMES,
  RESOURCE_ATTRIBUTE_KEYS,
  SANDBOX_ATTRIBUTE_PREFIX,
  SANDBOX_DURATION_BOUNDARIES_MS,
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
      'OPERATION_BOUNDARIES_MS',
      OPERATION_BOUNDARIES_MS,
      [1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000, 300000, 1800000],
    ],
    [
      'GYM_DURATION_BOUNDARIES_MS',
      GYM_DURATION_BOUNDARIES_MS,
      // Gym 0.7.0's: the OpenTelemetry SDK default (nemo-lens gives no advice), as the parity test saw.
      [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000],
    ],
    [
      'SANDBOX_DURATION_BOUNDARIES_MS',
      SANDBOX_DURATION_BOUNDARIES_MS,
      [250, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000],
    ],
  ])('%s equals the spec and is strictly increasing', (_name, actual, expected) => {
    expect([...actual]).toEqual(expected);
    for (let i = 1; i < actual.length; i++) expect(actual[i]).toBeGreaterThan(actual[i - 1] as number);
  });
});

describe('names and keys', () => {
  it('instrument names are the nine Gym names', () => {
    expect([...GYM_INSTRUMENTS]).toEqual([
      'gym.resources.operation.queue_duration_ms',
      'gym.resources.operation.duration_ms',
      'gym.resources.operation.queued',
      'gym.resources.operation.active',
      'gym.rollout.duration_ms',
      'gym.verify.duration_ms',
      'gym.verify.success_rate',
      'gym.servers.active',
      'gym.server.request_duration_ms',
    ]);
    expect(constants.METRIC_SERVER_REQUEST_DURATION).toBe('gym.server.request_duration_ms');
  });

  it('metric attribute keys; the executor key is not nested under operation', () => {
    expect(ATTR_OPERATION).toBe('nemo.gym.resources.operation');
    expect(ATTR_EXECUTOR).toBe('nemo.gym.resources.executor');
    expect(ATTR_OUTCOME).toBe('nemo.gym.resources.operation.outcome');
    expect(ATTR_EXECUTOR.startsWith(`${ATTR_OPERATION}.`)).toBe(false);
  });

  it('resource attribute keys', () => {
    expect([ATTR_GYM_VERSION, ATTR_SERVER_NAME, ATTR_SERVER_TYPE, ATTR_SERVICE_GROUP, ATTR_RUN_ID]).toEqual([
      'nemo.gym.version',
      'nemo.gym.server.name',
      'nemo.gym.server.type',
      'nemo.gym.service_group',
      'nemo.run.id',
    ]);
    expect([...RESOURCE_ATTRIBUTE_KEYS]).toEqual([
      ATTR_GYM_VERSION,
      ATTR_SERVER_NAME,
      ATTR_SERVER_TYPE,
      ATTR_SERVICE_GROUP,
      ATTR_RUN_ID,
    ]);
  });

  it('the sandbox prefix', () => {
    expect(SANDBOX_ATTRIBUTE_PREFIX).toBe('nemo.gym.sandbox.');
  });
});
