// Writes the require() entries of a package next to its ESM build, run by each publishable
// package's `build` after `tsc -b` (cwd: the package). The packages are ESM; Node 20.19+ can
// require() an ES module, so each dist/<entry>.cjs only hands require() the ESM build itself
// (one module instance whichever way it is loaded). `exports` sends `require` here and `import`
// to the ESM build: one entry per `exports` row whose `require` condition names a dist/<entry>.cjs.
//
// The types of the require() path are a CommonJS copy of the declarations: every dist/**/*.d.ts
// is also written as .d.cts, its relative `./x.js` specifiers as `./x.cjs`. A .d.cts that only
// re-exported the ESM .d.ts would be an `import` of an ES module from CommonJS, which TypeScript
// refuses under `module: node16` (TS1479) for every user who does not set `skipLibCheck`.
// Other packages' specifiers stay as they are: TypeScript resolves them with the `require`
// condition, to their own CommonJS types.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const { exports = {} } = JSON.parse(readFileSync('package.json', 'utf8'));
const entries = Object.values(exports)
  .map((target) => /^\.\/dist\/([\w-]+)\.cjs$/.exec(target?.require?.default ?? '')?.[1])
  .filter((entry) => entry !== undefined);

for (const entry of entries.length > 0 ? entries : ['index']) {
  writeFileSync(
    `dist/${entry}.cjs`,
    `'use strict';\n// require() of the ESM build (Node 20.19+): the same module instance as import.\nmodule.exports = require('./${entry}.js');\n`,
  );
}

/** `from './x.js'`, `import('./x.js')`, `import './x.js'` → `./x.cjs` (relative only). */
const relative = /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]*?)\.js\2/g;

for (const file of readdirSync('dist', { recursive: true, encoding: 'utf8' })) {
  if (!file.endsWith('.d.ts')) continue;
  const path = join('dist', file);
  const source = readFileSync(path, 'utf8');
  writeFileSync(path.replace(/\.d\.ts$/, '.d.cts'), source.replace(relative, '$1$2$3.cjs$2'));
}
