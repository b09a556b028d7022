import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { moveInto, STAGE_PREFIX, stageFor } from "../../scripts/move-into.mjs";
import { tempDir } from "../helpers/cli.js";

/** Writes `files` (path from `root` → text) under `root`. */
function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** Every file under `root` (paths from it) with its text. */
function read(root: string, under = ""): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(join(root, under), { withFileTypes: true })) {
    const path = under === "" ? entry.name : `${under}/${entry.name}`;
    if (entry.isDirectory()) Object.assign(files, read(root, path));
    else files[path] = readFileSync(join(root, path), "utf8");
  }
  return files;
}

/** How `npm run build` puts a build in place: dist/ is replaced file by file, never removed first (issue 30). */
describe("a build moved into place", () => {
  it("leaves exactly the new build, with another build's stage untouched", () => {
    const dist = tempDir();
    write(dist, {
      "bundle/bulkcheck.cjs": "old",
      "bundle/gone.cjs": "old",
      "cli/old.js": "old",
      "geo/carrier/44.json": "old",
      ".next-1/bundle/bulkcheck.cjs": "another build's",
    });
    const stage = stageFor(dist);
    write(stage, { "bundle/bulkcheck.cjs": "new", "cli/new.js": "new", "types/index.d.ts": "new" });
    moveInto(stage, dist);
    const left = read(dist);
    expect(left).toEqual({
      "bundle/bulkcheck.cjs": "new",
      "cli/new.js": "new",
      "types/index.d.ts": "new",
      // Stages of other builds are theirs to move (this one was running: pid 1 never goes away).
      ".next-1/bundle/bulkcheck.cjs": "another build's",
    });
  });

  it("removes the stages of builds that were killed before they could move theirs", () => {
    const dist = tempDir();
    const dead = `${STAGE_PREFIX}${2 ** 22 + 12345}`;
    write(dist, { [`${dead}/bundle/bulkcheck.cjs`]: "half a build" });
    const stage = stageFor(dist);
    expect(readdirSync(dist).sort()).toEqual([stage.slice(dist.length + 1)]);
  });

  it("never leaves a moment where the CLI's file is missing: a reader on another thread finds it every time, while builds replace it", async () => {
    const dist = tempDir();
    write(dist, { "bundle/bulkcheck.cjs": "build 0" });
    const stop = new Int32Array(new SharedArrayBuffer(4));
    // Reads the file as fast as it can until told to stop; counts the reads that found no file.
    const reader = new Worker(
      `const { readFileSync } = require("node:fs");
       const { parentPort, workerData } = require("node:worker_threads");
       let reads = 0, missing = 0;
       parentPort.postMessage("reading");
       while (Atomics.load(workerData.stop, 0) === 0) {
         try { readFileSync(workerData.file); } catch (error) { if (error.code === "ENOENT") missing++; else throw error; }
         reads++;
       }
       parentPort.postMessage({ reads, missing });`,
      { eval: true, workerData: { stop, file: join(dist, "bundle", "bulkcheck.cjs") } },
    );
    const messages: unknown[] = [];
    const done = new Promise<{ reads: number; missing: number }>((resolve, reject) => {
      reader.on("message", (message) =>
        message === "reading" ? messages.push(message) : resolve(message as { reads: number; missing: number }),
      );
      reader.on("error", reject);
    });
    while (messages.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    for (let build = 1; build <= 200; build++) {
      const stage = stageFor(dist);
      write(stage, { "bundle/bulkcheck.cjs": `build ${build}`, "bundle/bulkcheck-actions.cjs": "actions" });
      moveInto(stage, dist);
    }
    Atomics.store(stop, 0, 1);
    const { reads, missing } = await done;
    await reader.terminate();
    expect(reads).toBeGreaterThan(0);
    expect(missing).toBe(0);
    expect(readFileSync(join(dist, "bundle", "bulkcheck.cjs"), "utf8")).toBe("build 200");
  });
});
