// Excel input: `bulkcheck validate BOOK.xlsx --country GB --column mobile`, the command a user
// runs, on a 1,000,000-row × 7-column CRM workbook (bench/gen-workbook.js) in both shapes a
// reader meets, beside the same cells as CSV (the reference):
// - "inline": strings in their cells, as bulkcheck's own writer and many exporters write;
// - "shared": as Excel saves it, 3,000,000 distinct shared strings after the sheet: the reader
//   reads them first through the zip's directory (src/prepare/workbook-package.ts) and holds
//   them as UTF-8 bytes in a few Buffers with one offset each (src/prepare/shared-strings.ts)
//   while it streams the sheet.
// Target (issue 13): peak RSS ≤ 500 MB. Each run must keep every row (the mobile column is
// a string column, so a lost shared-strings part shows as a failed or short run).
//
//   npm run build && node bench/xlsx-input-bench.js [rows=1000000] [runs=1]
//
// Figures: wall_s is the median wall time of the whole command, peak_rss_mb the highest
// peak RSS (GNU time's %M, or /proc VmHWM polling), from ./measure.js.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { writeWorkbook } from "./gen-workbook.js";
import { measure, median } from "./measure.js";

const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));
const MB = 1024 * 1024;

/** `runs` validate runs of `file`: median wall, highest peak RSS, and the rows kept. */
async function validate(file, out, runs) {
  const all = [];
  for (let i = 0; i < runs; i++) {
    const args = [BIN, "validate", file, "--country", "GB", "--column", "mobile", "-o", out, "--force", "--json"];
    const run = await measure(process.execPath, args);
    if (run.code !== 0) throw new Error(`validate ${file} failed (${run.code}): ${run.stderr.slice(0, 500)}`);
    all.push(run);
  }
  const summary = JSON.parse(all.at(-1).stdout);
  return {
    wall_s: Number((median(all.map((run) => run.wallMs)) / 1000).toFixed(2)),
    peak_rss_mb: Math.max(...all.map((run) => run.peakRssMb)),
    kept: summary.kept,
    file_mb: Number((statSync(file).size / MB).toFixed(1)),
  };
}

export async function run({ rows = 1_000_000, runs = 1 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-xlsx-input-bench-"));
  const cases = {};
  try {
    const csv = join(dir, "crm.csv");
    for (const shape of ["inline", "shared"]) {
      const book = join(dir, `crm-${shape}.xlsx`);
      await writeWorkbook(rows, book, shape === "inline" ? csv : undefined, shape);
      cases[shape] = await validate(book, join(dir, "upload.txt"), runs);
      rmSync(book);
    }
    cases.csv = await validate(csv, join(dir, "upload.txt"), runs);
    const uploaded = readFileSync(join(dir, "upload.txt"), "utf8").split("\n").filter(Boolean).length;
    for (const [name, figures] of Object.entries(cases)) {
      if (figures.kept !== rows || uploaded !== rows) throw new Error(`${name}: kept ${figures.kept} of ${rows} rows`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    name: "xlsx-input",
    node: process.version,
    machine: { cpus: availableParallelism(), model: cpus()[0]?.model, load_average_at_end: loadavg().map((n) => Number(n.toFixed(1))) },
    rows,
    runs,
    cases,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [rows, runs] = process.argv.slice(2).map(Number);
  console.log(JSON.stringify(await run({ rows: rows || undefined, runs: runs || undefined }), null, 2));
}
