import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package's own directory: the nearest one above this module whose package.json
 * is bulkcheck's. The same code runs from src/ (tests), from dist/ (tsc) and from the
 * bundle, each at a different depth, so no path relative to the module fits all three.
 * (Resolving "bulkcheck/package.json" through the package's exports would also find
 * it, but loads Node's ES-module resolver: ~2.5 ms of every start.)
 */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === "bulkcheck") return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json of bulkcheck above ${from}`);
  }
}

const PACKAGE_ROOT = packageRoot(dirname(fileURLToPath(import.meta.url)));

/** A file shipped with the package, e.g. `packageFile("examples", "contacts.csv")`. */
export function packageFile(...segments: string[]): string {
  return join(PACKAGE_ROOT, ...segments);
}
