#!/usr/bin/env node
// Hostile cells: how long preparation takes on cells built to make backtracking patterns
// run for minutes (test/prepare/hostile-cells.test.ts holds only a generous bound).
// - classifyCell (dist) on each 1 MB cell, in this process;
// - `bulkcheck validate` on the issue's cell, "a" + 80,000 spaces + "b" (42 s before
//   cleaning became linear), and on a 50 MB one-column file of 1 MB cells, as a child process.
// Prints one JSON object.   node bench/hostile-bench.js
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { measure } from "./measure.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const BIN = join(here, "..", "bin", "bulkcheck.js");
const { classifyCell } = await import(pathToFileURL(join(here, "..", "dist", "prepare", "classify.js")).href);

const MB = 1_000_000;
const fill = (pattern, length = MB) => pattern.repeat(Math.ceil(length / pattern.length)).slice(0, length);
const CELLS = {
  spaces_between_letters: "a" + fill(" ", MB - 2) + "b",
  spaces_before_extension: "+44 7400 123456" + fill(" ", MB - 20) + "x12",
  digits: fill("7"),
  x: fill("x"),
  ext: fill("ext "),
  hash: fill("#1"),
  quotes: fill('"'),
  mixed_junk: fill("+(0) 44-x ext. #1;,'\"tel:"),
  spaces_only: fill(" "),
};

const cells = {};
for (const [name, cell] of Object.entries(CELLS)) {
  const started = performance.now();
  const result = classifyCell(cell, { country: "GB" });
  cells[name] = { ms: Number((performance.now() - started).toFixed(2)), class: result.class };
}

const dir = mkdtempSync(join(tmpdir(), "bulkcheck-hostile-bench-"));
try {
  const issueCell = join(dir, "issue.txt");
  writeFileSync(issueCell, "a" + " ".repeat(80_000) + "b\n");
  const fifty = join(dir, "hostile-50mb.txt");
  const lines = [];
  for (let i = 0; i < 50; i++) lines.push(Object.values(CELLS)[i % Object.keys(CELLS).length]);
  writeFileSync(fifty, lines.join("\n") + "\n+44 7400 123456\n");
  const run = async (file) => {
    const r = await measure(process.execPath, [
      BIN,
      "validate",
      file,
      "--country",
      "GB",
      "--quiet",
      "-o",
      join(dir, "upload.txt"),
      "--force",
    ]);
    if (r.code !== 0) throw new Error(`validate ${file} failed: ${r.stderr.slice(0, 300)}`);
    return { wall_s: Number((r.wallMs / 1000).toFixed(2)), peak_rss_mb: r.peakRssMb };
  };
  console.log(
    JSON.stringify(
      {
        name: "hostile",
        classify_cell_1mb: cells,
        validate_issue_cell: await run(issueCell),
        validate_50mb_file: { mb: 50, ...(await run(fifty)) },
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
