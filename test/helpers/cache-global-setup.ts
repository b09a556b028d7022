import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The test run's XDG_CACHE_HOME for the processes it spawns (see compileCacheHome in cli.ts). */
    cacheHome: string;
  }
}

/**
 * One cache directory for the whole test run (vitest `globalSetup`), removed at its end: where
 * the bulkcheck processes the tests spawn keep Node's compile cache (bin/bulkcheck.js puts it in
 * the user's cache directory), shared by all of them as by a user's runs, instead of a copy in
 * each test's HOME or work directory.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-test-cache-"));
  project.provide("cacheHome", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
