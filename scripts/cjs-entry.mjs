// Writes the require() entries of a package next to its ESM build, run by each publishable
// package's `build` after `tsc -b` (cwd: the package). The packages are ESM; Node 20.19+ can
// require() an ES module, so each dist/<entry>.cjs only hands require() the ESM build itself
// (one module instance whichever way it is loaded), and dist/<entry>.d.cts gives its types to
// TypeScript's CommonJS resolution. `exports` sends `require` here and `import` to the ESM build:
// one pair per entry of `exports` whose `require` condition names a dist/<entry>.cjs.
import { readFileSync, writeFileSync } from 'node:fs';

const { exports = {} } = JSON.parse(readFileSync('package.json', 'utf8'));
const entries = Object.values(exports)
  .map((target) => /^\.\/dist\/([\w-]+)\.cjs$/.exec(target?.require?.default ?? '')?.[1])
  .filter((entry) => entry !== undefined);

for (const entry of entries.length > 0 ? entries : ['index']) {
  writeFileSync(
    `dist/${entry}.cjs`,
    `'use strict';\n// require() of the ESM build (Node 20.19+): the same module instance as import.\nmodule.exports = require('./${entry}.js');\n`,
  );
  writeFileSync(`dist/${entry}.d.cts`, `export * from './${entry}.js';\n`);
}
