// Paths of the package, for tests that read the checked-in and built files.

import { fileURLToPath } from 'node:url';

/** Absolute path of a file of this package. */
export function packageFile(path: string): string {
  return fileURLToPath(new URL(`../../${path}`, import.meta.url));
}
