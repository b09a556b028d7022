import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { prepareList as PrepareList } from "../../src/prepare/index.js";
import { expectAccounted, tempDir } from "./helpers.js";

/**
 * Worker threads run compiled JavaScript, so this compares the worker path with
 * the in-thread path on dist/ (built by `npm test`; BULKCHECK_DIST points
 * elsewhere); it is skipped when there is no build, as when vitest runs the
 * sources alone.
 */
const root = resolve(import.meta.dirname, "..", "..");
const dist = join(process.env.BULKCHECK_DIST ?? join(root, "dist"), "prepare", "index.js");

describe.skipIf(!existsSync(dist))("prepareList with worker threads (compiled dist/)", () => {
  it(
    "gives the same summary, upload and rejects as in-thread on a 40k-row export (some 25 blocks of 64 KiB)",
    { timeout: 120_000 },
    async () => {
      const { prepareList } = (await import(pathToFileURL(dist).href)) as { prepareList: typeof PrepareList };
      const data = await tempDir();
      execFileSync(process.execPath, [join(root, "bench", "gen-messy-csv.js"), "40000", data]);
      const run = async (workers: number) => {
        const out = await tempDir();
        const result = await prepareList({
          source: join(data, "messy-40000.csv"),
          country: "GB",
          workers,
          outputDir: out,
          rejectsPath: join(out, "rejects.csv"),
        });
        expectAccounted(result.summary);
        return {
          summary: result.summary,
          chunks: result.chunks.map(({ count, bytes, sha256 }) => ({ count, bytes, sha256 })),
          rejects: await readFile(join(out, "rejects.csv"), "utf8"),
        };
      };
      const inThread = await run(0);
      expect(await run(2)).toEqual(inThread);
      expect(await run(1)).toEqual(inThread);
    },
  );
});
