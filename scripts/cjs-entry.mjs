// Writes the require() entry of a package next to its ESM build, run by each publishable
// package's `build` after `tsc -b` (cwd: the package). The packages are ESM; Node 20.19+ can
// require() an ES module, so dist/index.cjs only hands require() the ESM build itself (one
// module instance whichever way it is loaded), and dist/index.d.cts gives its types to
// TypeScript's CommonJS resolution. `exports` sends `require` here and `import` to the ESM build.
import { writeFileSync } from 'node:fs';

writeFileSync(
  'dist/index.cjs',
  "'use strict';\n// require() of the ESM build (Node 20.19+): the same module instance as import.\nmodule.exports = require('./index.js');\n",
);
writeFileSync('dist/index.d.cts', "export * from './index.js';\n");
