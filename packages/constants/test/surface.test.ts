// Every value @gym/constants exports is a promise. index.ts re-exports whole files, so a new
// constant in any of them would be public silently: this list makes it a decision. An `ATTR_*`
// key is held instead by its naming rule (constants.test.ts) and by the contract, which must
// state it (test/telemetry-doc.test.ts).

import * as constants from '@gym/constants';
import { expect, it } from '@jest/globals';

const PUBLIC_VALUES = [
  'COMPONENTS',
  'DEFAULT_SPAN_GROUP_SPEC',
  'ENV_FALLBACK_PREFIX',
  'ENV_PREFIX',
  'ENV_TRACEPARENT',
  'EXECUTORS',
  'FALSY_WORDS',
  'HTTP_DESTINATION_EXTERNAL',
  'INSTRUMENTS',
  'LIMIT_NAME_PATTERN',
  'MAX_LIMIT_NAMES',
  'MAX_STARTUP_STAGES',
  'OPERATIONS',
  'OUTCOMES',
  'SANDBOX_PROVIDER_PATTERN',
  'SERVER_NAME_PATTERN',
  'SERVER_TYPES',
  'SPAN_GROUPS',
  'SPAN_GROUP_PRESETS',
  'SPAN_SANDBOX_ALLOCATION',
  'SPAN_SANDBOX_EXEC',
  'SPAN_SANDBOX_REQUEST',
  'SPAN_SANDBOX_RESOURCE_SAMPLE',
  'SPAN_SANDBOX_START',
  'SPAN_SANDBOX_STOP',
  'SPAN_SERVER_STARTUP',
  'SPAN_STARTUP',
  'SPAN_STARTUP_SERVER',
  'SPAN_VERIFY',
  'STARTUP_STAGE_LOOP_START',
  'STARTUP_STAGE_NODE_BOOTSTRAP',
  'STARTUP_STAGE_PATTERN',
  'TRUTHY_WORDS',
  'V8JS_GC_TYPES',
  'isComponent',
  'isExecutor',
  'isOperation',
  'isOutcome',
  'isServerType',
  'isSpanGroup',
  'resolveSpanGroups',
];

it('exports exactly the listed values', () => {
  expect(
    Object.keys(constants)
      .filter((name) => !name.startsWith('ATTR_'))
      .sort(),
  ).toEqual(PUBLIC_VALUES);
});
