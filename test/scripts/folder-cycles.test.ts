import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeCycles, folderCycles, folderGraph, layerViolations } from "../../scripts/folder-cycles.mjs";
import { tempDir } from "../helpers/cli.js";

/** Writes `files` (path from `root` → text) under `root`. */
function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** The check `npm run lint` runs, on `root`. */
function check(root: string) {
  return spawnSync(process.execPath, ["scripts/folder-cycles.mjs", root], { encoding: "utf8" });
}

/** The layering check of `npm run lint`: folders of src/ that import each other (through any files), or one above them. */
describe("the folder cycle check", () => {
  it("fails on two folders importing each other through different files, and names an import of each edge", () => {
    const root = tempDir();
    write(root, {
      "run/plan.ts": 'import { cost } from "../tasks/cost.js";\nexport const plan = cost;\n',
      "tasks/cost.ts": "export const cost = 1;\n",
      "tasks/billing.ts": 'import type { Origin } from "../run/origins.js";\nexport type Bill = Origin;\n',
      "run/origins.ts": "export type Origin = string;\n",
      "csv/write.ts": 'export const write = () => import("../run/plan.js");\n',
    });
    const edges = folderGraph(root);
    expect(folderCycles(edges)).toEqual([["run", "tasks"]]);
    expect(describeCycles(edges, folderCycles(edges))[0]).toContain("tasks → run: tasks/billing.ts imports ../run/origins.js");
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("folders importing each other: run, tasks");
  });

  it("finds a cycle through a file directly in the root and through import()", () => {
    const root = tempDir();
    write(root, {
      "temp-dir.ts": 'import { isRunning } from "./results/temp-files.js";\nexport const dir = isRunning;\n',
      "results/temp-files.ts": 'export const isRunning = () => import("../temp-dir.js");\n',
    });
    expect(folderCycles(folderGraph(root))).toEqual([["results", "temp-dir.ts"]]);
  });

  it("fails on a folder importing one above it in the layers, though no cycle is closed", () => {
    const root = tempDir();
    write(root, {
      "tasks/billing.ts": 'import type { Origin } from "../run/origins.js";\nexport type Bill = Origin;\n',
      "run/origins.ts": "export type Origin = string;\n",
    });
    expect(folderCycles(folderGraph(root))).toEqual([]);
    expect(layerViolations(folderGraph(root))).toEqual([
      "tasks imports run, which is not below it (see LAYERS in scripts/folder-cycles.mjs): tasks/billing.ts imports ../run/origins.js",
    ]);
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("tasks imports run, which is not below it");
  });

  it("passes a layered tree, and src/ as it is", () => {
    const root = tempDir();
    write(root, {
      "run/plan.ts": 'import { cost } from "../tasks/cost.js";\nimport { x } from "./x.js";\nexport const plan = cost + x;\n',
      "run/x.ts": "export const x = 1;\n",
      "tasks/cost.ts": 'import { write } from "../csv/write.js";\nexport const cost = write;\n',
      "csv/write.ts": "export const write = 1;\n",
    });
    expect(check(root).status).toBe(0);
    const src = check("src");
    expect(src.stderr).toBe("");
    expect(src.status).toBe(0);
  });
});
