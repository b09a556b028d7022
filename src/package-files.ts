import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * The package's own directory, found through its name (a package may import itself
 * through its `exports`) rather than a path relative to the calling module: the same
 * code runs from src/ (tests), from dist/ (tsc) and from the bundle's chunks, each at
 * a different depth.
 */
const PACKAGE_ROOT = dirname(createRequire(import.meta.url).resolve("bulkcheck/package.json"));

/** A file shipped with the package, e.g. `packageFile("examples", "contacts.csv")`. */
export function packageFile(...segments: string[]): string {
  return join(PACKAGE_ROOT, ...segments);
}
