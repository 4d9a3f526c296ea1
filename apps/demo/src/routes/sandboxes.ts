// The sandbox routes: create a local-process sandbox, read its real CPU and memory, upload a
// file into it, run an exec inside it, delete it. These are not `resourcesOperation`s: a sandbox is capacity held for seconds under a
// quota (429 when full), not a call waiting in a queue.

import { z } from 'zod';
import type { Route } from '../http-app.js';
import { readJsonBody } from '../read-body.js';
import type { SandboxPool } from '../sandbox-pool.js';

/** Body of POST /sandboxes/:id/exec: SHA-256 rounds run inside the sandbox process. */
export const execBodySchema = z.strictObject({
  input: z.string().max(8192),
  rounds: z.int().min(1).max(200_000).default(1000),
});

/** Body of POST /sandboxes/:id/file: one named file, kept in the sandbox process's memory. */
export const uploadBodySchema = z.strictObject({
  name: z.string().min(1).max(255),
  content: z.string().max(65_536),
});

/** Body of POST /sandboxes. */
export const sandboxBodySchema = z.strictObject({
  cpu: z.number().min(0).max(1).default(0.1),
  memoryMib: z.int().min(0).max(256).default(16),
  lifetimeMs: z.int().min(100).max(30_000).default(2000),
});

/** POST /sandboxes, GET /sandboxes/:id, POST /sandboxes/:id/file, POST /sandboxes/:id/exec and DELETE /sandboxes/:id over one pool. */
export function createSandboxRoutes(pool: SandboxPool): Route[] {
  return [
    {
      method: 'POST',
      path: '/sandboxes',
      async handle(req) {
        const request = await readJsonBody(req, sandboxBodySchema);
        const handle = pool.create(request);
        return { status: 201, body: { id: handle.id, pid: handle.pid, lifetimeMs: request.lifetimeMs } };
      },
    },
    {
      method: 'GET',
      path: '/sandboxes/:id',
      async handle(_req, _signal, params) {
        const { handle, sample } = await pool.sample(params.id ?? '');
        return { status: 200, body: { id: handle.id, pid: handle.pid, sample } };
      },
    },
    {
      method: 'POST',
      path: '/sandboxes/:id/file',
      async handle(req, _signal, params) {
        const id = params.id ?? '';
        const request = await readJsonBody(req, uploadBodySchema);
        const { bytes } = await pool.upload(id, request);
        return { status: 200, body: { id, bytes } };
      },
    },
    {
      method: 'POST',
      path: '/sandboxes/:id/exec',
      async handle(req, _signal, params) {
        const id = params.id ?? '';
        const request = await readJsonBody(req, execBodySchema);
        const { digest } = await pool.exec(id, request);
        return { status: 200, body: { id, digest } };
      },
    },
    {
      method: 'DELETE',
      path: '/sandboxes/:id',
      async handle(_req, _signal, params) {
        const id = params.id ?? '';
        const exit = await pool.delete(id);
        return { status: 200, body: { id, exit } };
      },
    },
  ];
}
