// Every TypeScript block of every README, as a user copies it: extracted, completed with the
// user's own code the block leaves to them (a verifier, a request, a payload: defined here,
// small and real, so the block both type-checks and runs), and written as an ES module (.mts)
// and as a CommonJS module (.cts, the require() path: imports at the top, the rest inside an
// async function, ESM-only third-party packages through `await import()` as a CommonJS user
// writes them). Used by test/release.test.ts, which type-checks both in a project that
// installed the package from a registry, and runs the ES module there where it can run.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const repo = new URL('../../', import.meta.url).pathname;

/** The user's code a block needs, and whether the block can run as it stands. */
interface UserCode {
  /** Definitions of what the block leaves to the user (TypeScript, strict). */
  readonly prelude?: string;
  /** Why the block is type-checked but not run; undefined when it runs. */
  readonly notRun?: string;
}

const OPERATIONS_USER = `
import { metrics } from '@opentelemetry/api';
const request = new Request('http://127.0.0.1/verify');
const task = { id: 't1' };
async function runVerifier(_task: { id: string }, options: { signal?: AbortSignal; timeoutMs: number }) {
  options.signal?.throwIfAborted();
  return { timedOut: false, signalCode: null as NodeJS.Signals | null, verdict: true };
}
const prompt = 'Is 2 + 2 = 4?';
const signal = AbortSignal.timeout(10_000);
async function callJudge(_prompt: string): Promise<number> { return 1; }
async function askUpstream(_prompt: string): Promise<string> { return 'yes'; }
const args = { query: 'x' };
async function runTool(_args: { query: string }): Promise<string> { return 'ok'; }
const connections = { take: async (): Promise<() => void> => () => {} };
async function work(): Promise<void> {}
async function spawnTool(): Promise<void> {}
const meterProvider = metrics.getMeterProvider();
`;

/** Keyed by `<README path>#<block number from 1>`. */
const USER_CODE: Record<string, UserCode> = {
  'README.md#1': {
    prelude: `type Task = { id: string };
async function runVerifier(task: Task, signal?: AbortSignal): Promise<boolean> { signal?.throwIfAborted(); return task.id !== ''; }
`,
    notRun: 'run in every telemetry setting by test/readme-example.test.ts',
  },
  'packages/constants/README.md#1': { prelude: `const name: string = 'verify';\n` },
  'packages/metrics/README.md#1': {
    prelude: `const task = { id: 't1' };
async function runVerifier(_task: { id: string }): Promise<boolean> { return true; }
const rolloutMs = 1_200;
`,
  },
  'packages/metrics/README.md#2': { prelude: `const servers: string[] = ['server-1', 'server-2'];\n` },
  'packages/metrics/README.md#3': {
    prelude: `import { metrics } from '@opentelemetry/api';\nconst meterProvider = metrics.getMeterProvider();\n`,
  },
  'packages/metrics/README.md#4': {
    prelude: `const job = { id: 'j1' };
const verifier = { async run(_job: { id: string }): Promise<boolean> { return true; } };
`,
  },
  'packages/operations/README.md#1': { prelude: OPERATIONS_USER },
  'packages/operations/README.md#2': { prelude: OPERATIONS_USER },
  'packages/sandbox-telemetry/README.md#1': {
    prelude: `interface Sandbox { readonly id: string; ready(): Promise<void>; upload(files: string[]): Promise<void>; remove(): Promise<void> }
const docker = {
  async create(_spec: { image: string }): Promise<Sandbox> {
    return { id: 'sandbox-1', async ready() {}, async upload() {}, async remove() {} };
  },
};
const spec = { image: 'python:3.12' };
const files = ['main.py'];
const id = 'sandbox-1';
const command = ['python', 'main.py'];
async function execa(_file: string, _args: string[]): Promise<{ stdout: string }> { return { stdout: '' }; }
`,
  },
  'packages/sandbox-telemetry/README.md#3': {
    prelude: `interface Quantity { cpu?: string; memory?: string }
interface KubeApi {
  readPod(namespace: string, pod: string): Promise<{
    spec: { nodeName: string; containers: { name: string; resources: { requests?: Quantity; limits?: Quantity } }[] };
  }>;
  podMetrics(namespace: string, pod: string): Promise<{ cpuCores: number; memoryMib: number }>;
}
function cores(quantity: string | undefined): number | undefined { return quantity === undefined ? undefined : Number.parseFloat(quantity); }
function mib(quantity: string | undefined): number | undefined { return quantity === undefined ? undefined : Number.parseInt(quantity, 10); }
`,
  },
  'packages/observer/README.md#1': {
    prelude: `import type { IncomingMessage, ServerResponse } from 'node:http';
import { metrics } from '@opentelemetry/api';
async function loadConfig(): Promise<{ verifier: string }> { return { verifier: 'math' }; }
async function setUpTelemetry(): Promise<void> {}
async function loadVerifier(_config: { verifier: string }): Promise<() => boolean> { return () => true; }
function handler(_request: IncomingMessage, response: ServerResponse): void { response.end('ok'); }
const myMeterProvider = metrics.getMeterProvider();
`,
    notRun: 'it serves on port 8000',
  },
  'packages/http-pool/README.md#1': {
    prelude: `const payload = JSON.stringify({ answer: 42 });\n`,
    notRun: 'it calls a judge at judge.internal',
  },
  'packages/otel-bootstrap/README.md#2': { notRun: 'it exports to a collector and starts a fleet (server.js)' },
};

/** A README's ```ts blocks, in order. */
export function tsBlocks(readme: string): string[] {
  const text = readFileSync(join(repo, readme), 'utf8');
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string);
}

/** Splits a module into its import statements and the rest. */
function splitImports(source: string): { imports: string[]; body: string } {
  const imports: string[] = [];
  const body: string[] = [];
  let current: string[] | undefined;
  for (const line of source.split('\n')) {
    if (current === undefined && /^import[\s{]/.test(line) && !/^import\s*\(/.test(line)) current = [];
    if (current === undefined) {
      body.push(line);
      continue;
    }
    current.push(line);
    if (/;\s*(\/\/.*)?$/.test(line)) {
      imports.push(current.join('\n'));
      current = undefined;
    }
  }
  return { imports, body: body.join('\n') };
}

/** Packages users load with `import` only (no require()): a CommonJS user writes `await import()`. */
const ESM_ONLY = ['p-limit'];

export interface Example {
  /** `<README path>#<n>` */
  readonly id: string;
  readonly readme: string;
  /** The block as the README shows it. */
  readonly block: string;
  /** The ES module: the user's code, then the block. */
  readonly esm: string;
  /** The CommonJS module (.cts). */
  readonly cjs: string;
  /** Modules the block (and the user's code) import, other than node: builtins. */
  readonly imports: readonly string[];
  readonly notRun: string | undefined;
}

/** The examples of one README. */
export function examples(readme: string): Example[] {
  return tsBlocks(readme).map((block, index) => {
    const id = `${readme}#${index + 1}`;
    const user = USER_CODE[id] ?? {};
    const prelude = user.prelude ?? '';
    const esm = `${prelude}\n${block}\nexport {};\n`;
    const split = splitImports(`${prelude}\n${block}`);
    const hoisted: string[] = [];
    const dynamic: string[] = [];
    for (const statement of split.imports) {
      const from = /from\s+'([^']+)'/.exec(statement)?.[1] ?? '';
      const only = ESM_ONLY.includes(from) && !/^import type/.test(statement);
      const name = /^import\s+(\w+)\s+from/.exec(statement)?.[1];
      if (only && name) dynamic.push(`const { default: ${name} } = await import('${from}');`);
      else hoisted.push(statement);
    }
    const body = split.body.replace(/^export\s+(?=(async\s+)?function|const|interface|type|class)/gm, '');
    const cjs = `${hoisted.join('\n')}\n\nasync function example(): Promise<void> {\n${dynamic.join('\n')}\n${body}\n}\nvoid example;\n`;
    const imports = [
      ...new Set(
        split.imports
          .map((statement) => /from\s+'([^']+)'/.exec(statement)?.[1] ?? '')
          .filter((from) => from !== '' && !from.startsWith('node:')),
      ),
    ];
    return { id, readme, block, esm, cjs, imports, notRun: user.notRun };
  });
}

/** The package a module specifier names (`@scope/name/sub` → `@scope/name`). */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}
