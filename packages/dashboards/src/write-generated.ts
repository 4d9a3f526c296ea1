// Writes the generated files under a folder (creating `grafana/` and `prometheus/`).

import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { GENERATED_PATHS, generate } from './generate.js';
import type { GenerateOptions } from './types.js';

/** Writes the three files under `dir`; resolves with their absolute paths. */
export async function writeGenerated(dir: string, options: GenerateOptions = {}): Promise<string[]> {
  const files = generate(options);
  const written: string[] = [];
  for (const path of GENERATED_PATHS) {
    const target = join(dir, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, files[path]);
    written.push(target);
  }
  return written;
}
